package io.hts.gpu.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The child-JVM runner on the CPU: the child finds the test classes, its exit code and output come back. */
class ChildJvmTests {

    /** Prints its argument on both streams and exits with it. */
    static final class Exits {

        public static void main(String[] args) {
            System.out.println("child says " + args[0]);
            System.err.println("and on stderr");
            System.exit(Integer.parseInt(args[0]));
        }
    }

    /** Never ends by itself. */
    static final class Hangs {

        public static void main(String[] args) throws InterruptedException {
            new CountDownLatch(1).await();
        }
    }

    @Test
    void aChildThatExitsWithZeroGivesBackItsOutput() throws Exception {
        assertThat(ChildJvm.runToSuccess(Exits.class, Duration.ofMinutes(1), "0"))
                .contains("child says 0", "and on stderr");
    }

    @Test
    void aChildThatFailsFailsTheCallerWithItsExitCodeAndOutput() {
        assertThatThrownBy(() -> ChildJvm.runToSuccess(Exits.class, Duration.ofMinutes(1), "3"))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining(Exits.class.getName())
                .hasMessageContaining("exited with 3")
                .hasMessageContaining("child says 3")
                .hasMessageContaining("and on stderr");
    }

    @Test
    void aChildPastItsBoundIsKilled() throws Exception {
        ChildJvm.Result r = ChildJvm.run(Hangs.class, Duration.ofSeconds(1));
        assertThat(r.timedOut()).isTrue();
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThatThrownBy(() -> ChildJvm.runToSuccess(Hangs.class, Duration.ofMillis(200)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("did not end within PT0.2S");
    }
}
