/**
 * Micrometer Observation of graph runs (tracing spans and timers where the application has them).
 */
@NullMarked
package io.hts.autoconfigure.observation;

import org.jspecify.annotations.NullMarked;
