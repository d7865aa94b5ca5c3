/**
 * The definition layer: task graphs, tasks, groups, barriers, bodies, and their validation and compilation.
 */
@NullMarked
package io.hts.engine.graph;

import org.jspecify.annotations.NullMarked;
