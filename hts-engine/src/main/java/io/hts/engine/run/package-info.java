/**
 * The scheduling layer: the scheduler, runs, the dependency manager, failure handling and diagnosis.
 */
@NullMarked
package io.hts.engine.run;

import org.jspecify.annotations.NullMarked;
