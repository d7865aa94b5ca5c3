package io.hts.engine.run;

/** What a run does when a task fails for good. In both modes the failed task's descendants are cancelled. */
public enum FailureMode {

    /** Cancel everything that has not started; running tasks finish (the default). */
    FAIL_FAST,

    /** Let independent branches run to the end. */
    CONTINUE
}
