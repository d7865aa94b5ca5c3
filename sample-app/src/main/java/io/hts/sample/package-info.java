/**
 * The HTS sample application: the seed's scenarios at the seed's scale as {@code TaskGraph} beans
 * (one subpackage each), run once at start-up with a summary, and a dashboard over the Actuator
 * endpoints.
 */
@NullMarked
package io.hts.sample;

import org.jspecify.annotations.NullMarked;
