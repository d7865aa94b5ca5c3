package io.hts.engine.run;

import io.hts.engine.graph.*;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SmokeTests {

    @Test
    void chainAndDiamond() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("smoke");
            Task<Integer> a = g.task("a").cpu(ctx -> 1);
            Task<Integer> b = g.task("b").after(a).cpu(ctx -> ctx.input(a) + 1);
            Task<Integer> c = g.task("c").after(a).cpu(ctx -> ctx.input(a) + 2);
            Task<Integer> d = g.task("d").after(b, c).cpu(ctx -> ctx.input(b) * ctx.input(c));
            GraphRun run = s.execute(g);
            assertThat(run.result(d)).isEqualTo(6);
            System.out.println(run.profile());
        }
    }

    @Test
    void millionChain() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("chain");
            Task<Integer> prev = g.task("n0").cpu(ctx -> 0);
            for (int i = 1; i < 1_000_000; i++) {
                Task<Integer> p = prev;
                prev = g.task("n" + i).after(p).cpu(ctx -> ctx.input(p) + 1);
            }
            long t0 = System.nanoTime();
            GraphRun run = s.execute(g);
            System.out.println("chain run ms " + (System.nanoTime() - t0) / 1e6);
            assertThat(run.result(prev)).isEqualTo(999_999);
        }
    }

    @Test
    void millionIndependent() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("flat");
            java.util.concurrent.atomic.LongAdder n = new java.util.concurrent.atomic.LongAdder();
            for (int i = 0; i < 1_000_000; i++) {
                g.task("n" + i).cpu(ctx -> { n.increment(); return null; });
            }
            long t0 = System.nanoTime();
            s.execute(g);
            System.out.println("flat run ms " + (System.nanoTime() - t0) / 1e6);
            assertThat(n.sum()).isEqualTo(1_000_000);
        }
    }
}
