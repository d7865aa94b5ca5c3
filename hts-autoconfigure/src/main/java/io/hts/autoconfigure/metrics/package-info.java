/**
 * Micrometer metrics of HTS.
 */
@NullMarked
package io.hts.autoconfigure.metrics;

import org.jspecify.annotations.NullMarked;
