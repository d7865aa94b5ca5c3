/**
 * Scheduling policies: which device a ready task runs on, and the learned cost model they use.
 */
@NullMarked
package io.hts.engine.policy;

import org.jspecify.annotations.NullMarked;
