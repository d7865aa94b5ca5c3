/**
 * Retries and time limits, resolved into Resilience4j instances.
 */
@NullMarked
package io.hts.engine.fault;

import org.jspecify.annotations.NullMarked;
