/**
 * Data-parallel helpers: operations split into GPU tasks whose copies overlap with compute.
 */
@NullMarked
package io.hts.gpu.parallel;

import org.jspecify.annotations.NullMarked;
