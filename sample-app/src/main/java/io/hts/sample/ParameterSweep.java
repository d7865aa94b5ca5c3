package io.hts.sample;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import java.util.List;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Scenario 2, a parameter sweep: a damped, driven oscillator simulated for every pair of 8
 * stiffness and 8 damping values (64 independent CPU tasks, the work-stealing pool spreads them),
 * then the pair with the smallest steady amplitude.
 */
@Configuration(proxyBeanMethods = false)
public class ParameterSweep {

    static final int STIFFNESSES = 8;
    static final int DAMPINGS = 8;
    static final int STEPS = 200_000;

    /** One simulation's parameters and the amplitude it settled at. */
    public record Point(double stiffness, double damping, double amplitude) {}

    @Bean
    TaskGraph sweep() {
        TaskGraph g = TaskGraph.named("sweep");
        TaskGroup<Point> points = g.group(
                "simulate",
                STIFFNESSES * DAMPINGS,
                (i, t) -> t.cpu(ctx -> simulate(1 + i / DAMPINGS, 0.05 + 0.05 * (i % DAMPINGS))));
        g.task("best").after(points).cpu(ctx -> best(ctx.inputs(points)));
        return g;
    }

    /** Semi-implicit Euler for x'' = -k x - c x' + cos(t); the amplitude over the last tenth of the run. */
    static Point simulate(double stiffness, double damping) {
        double dt = 1e-3;
        double x = 1;
        double v = 0;
        double amplitude = 0;
        for (int step = 0; step < STEPS; step++) {
            double a = -stiffness * x - damping * v + Math.cos(step * dt);
            v += a * dt;
            x += v * dt;
            if (step > STEPS - STEPS / 10) {
                amplitude = Math.max(amplitude, Math.abs(x));
            }
        }
        return new Point(stiffness, damping, amplitude);
    }

    static Point best(List<Point> points) {
        Point best = points.get(0);
        for (Point p : points) {
            if (p.amplitude() < best.amplitude()) {
                best = p;
            }
        }
        return best;
    }
}
