/**
 * The GPU execution backend the engine dispatches GPU tasks to, and the context GPU bodies get.
 */
@NullMarked
package io.hts.gpu.exec;

import org.jspecify.annotations.NullMarked;
