/**
 * Observability: task events, the recent-events buffer, the profiler and trace export.
 */
@NullMarked
package io.hts.engine.observe;

import org.jspecify.annotations.NullMarked;
