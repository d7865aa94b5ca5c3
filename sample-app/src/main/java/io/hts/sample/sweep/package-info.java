/**
 * Scenario (b), a parameter sweep: an SEIR epidemic model simulated at every point of a
 * (transmission rate, recovery rate) grid, each simulation scored against an observed outbreak, and
 * the grid's best fit found.
 */
@NullMarked
package io.hts.sample.sweep;

import org.jspecify.annotations.NullMarked;
