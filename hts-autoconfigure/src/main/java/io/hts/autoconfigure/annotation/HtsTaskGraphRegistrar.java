package io.hts.autoconfigure.annotation;

import io.hts.engine.fault.RetrySpec;
import io.hts.engine.fault.TimeLimitSpec;
import io.hts.engine.graph.GpuBody;
import io.hts.engine.graph.GpuTaskContext;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBody;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.graph.TaskGraph;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Finds the {@link HtsTask} methods of every bean (from the bean definitions, before any bean is
 * created), checks their wiring and registers one {@code TaskGraph} bean per graph name, built
 * when first needed. The target beans are looked up when a task first runs, so a bean may inject
 * the graph its own methods make up. Anything wrong fails start-up with an
 * {@link HtsTaskDefinitionException} naming the method.
 */
public final class HtsTaskGraphRegistrar implements BeanDefinitionRegistryPostProcessor, Ordered {

    /** One annotated method. */
    private record Declared(String beanName, Method method, HtsTask spec, String name, String where) {}

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
        if (!(registry instanceof ConfigurableListableBeanFactory factory)) {
            return;
        }
        Map<String, List<Declared>> graphs = new LinkedHashMap<>();
        for (String beanName : registry.getBeanDefinitionNames()) {
            Class<?> type = factory.getType(beanName, false);
            if (type == null || type.getName().startsWith("org.springframework.")) {
                continue;
            }
            for (Method m : ReflectionUtils.getUniqueDeclaredMethods(ClassUtils.getUserClass(type))) {
                HtsTask spec = AnnotatedElementUtils.findMergedAnnotation(m, HtsTask.class);
                if (spec != null) {
                    String name = spec.name().isEmpty() ? m.getName() : spec.name();
                    graphs.computeIfAbsent(spec.graph(), g -> new ArrayList<>())
                            .add(new Declared(beanName, m, spec, name, describe(m)));
                }
            }
        }
        for (Map.Entry<String, List<Declared>> graph : graphs.entrySet()) {
            String name = graph.getKey();
            List<Declared> ordered = check(name, graph.getValue());
            if (registry.containsBeanDefinition(name)) {
                Declared first = graph.getValue().get(0);
                throw new HtsTaskDefinitionException(
                        first.where(),
                        "its graph '" + name + "' is the name of another"
                                + " bean; @HtsTask graphs become TaskGraph beans of their own: choose another graph name");
            }
            RootBeanDefinition definition =
                    new RootBeanDefinition(TaskGraph.class, () -> build(name, ordered, factory));
            registry.registerBeanDefinition(name, definition);
        }
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {}

    // ------------------------------------------------------------------ checks

    /** Checks a graph's methods; returns them in dependency order. */
    private static List<Declared> check(String graph, List<Declared> methods) {
        Map<String, Declared> byName = new LinkedHashMap<>();
        for (Declared d : methods) {
            Declared other = byName.putIfAbsent(d.name(), d);
            if (other != null) {
                throw new HtsTaskDefinitionException(
                        d.where(),
                        "declares task '" + d.name() + "' of graph '" + graph + "', as " + other.where()
                                + " does; give one of them another name (@HtsTask(name = ...))");
            }
        }
        for (Declared d : methods) {
            checkSettings(d);
            checkParameters(graph, d, byName);
        }
        // the engine's validation finds cycles; a graph of the same shape with empty bodies shows them
        TaskGraph shape = TaskGraph.named(graph);
        for (Declared d : methods) {
            shape.task(d.name()).after(dependencies(d.spec())).cpu(ctx -> null);
        }
        GraphTopology compiled;
        try {
            compiled = shape.compile();
        } catch (GraphValidationException ex) {
            String involved = ex.tasks().stream()
                    .map(t -> byName.containsKey(t) ? byName.get(t).where() : t)
                    .collect(Collectors.joining(" -> "));
            throw new HtsTaskDefinitionException(
                    byName.get(ex.tasks().get(0)).where(),
                    ex.getMessage()
                            + (ex.problem() == GraphValidationException.Problem.CYCLE
                                    ? " (methods: " + involved + ")"
                                    : ""));
        }
        List<Declared> ordered = new ArrayList<>(methods.size());
        for (int k = 0; k < compiled.size(); k++) {
            ordered.add(byName.get(compiled.name(compiled.topological(k))));
        }
        return ordered;
    }

    private static void checkSettings(Declared d) {
        HtsTask spec = d.spec();
        if (spec.retries() < -1 || spec.retries() > RetrySpec.MAXIMUM_RETRIES) {
            throw new HtsTaskDefinitionException(
                    d.where(),
                    "retries = " + spec.retries() + "; accepted: 0 to " + RetrySpec.MAXIMUM_RETRIES
                            + ", or -1 for the scheduler's default");
        }
        if (spec.priority() < 0) {
            throw new HtsTaskDefinitionException(
                    d.where(), "priority = " + spec.priority() + "; accepted: 0 (normal)" + " or more (urgent)");
        }
        if (!spec.timeout().isEmpty()) {
            Duration timeout;
            try {
                timeout = DurationStyle.detectAndParse(spec.timeout());
            } catch (IllegalArgumentException ex) {
                throw new HtsTaskDefinitionException(
                        d.where(),
                        "timeout = \"" + spec.timeout() + "\" is not a duration;"
                                + " accepted: e.g. \"500ms\", \"5s\", \"PT1M\", or empty for the scheduler's default");
            }
            if (timeout.compareTo(TimeLimitSpec.MINIMUM) < 0 || timeout.compareTo(TimeLimitSpec.MAXIMUM) > 0) {
                throw new HtsTaskDefinitionException(
                        d.where(),
                        "timeout = \"" + spec.timeout() + "\"; accepted: a"
                                + " duration from 1ms to " + TimeLimitSpec.MAXIMUM.toDays()
                                + "d, such as \"5s\", or empty for the"
                                + " scheduler's default");
            }
        }
    }

    private static void checkParameters(String graph, Declared d, Map<String, Declared> byName) {
        String[] after = d.spec().after();
        List<Class<?>> values = new ArrayList<>();
        for (Class<?> p : d.method().getParameterTypes()) {
            if (TaskContext.class.isAssignableFrom(p)) {
                if (p != TaskContext.class && d.spec().device() != Placement.GPU) {
                    throw new HtsTaskDefinitionException(
                            d.where(),
                            "takes a " + p.getSimpleName() + " but may run on"
                                    + " the CPU (device = " + d.spec().device()
                                    + "); use device = Placement.GPU, or take a"
                                    + " TaskContext");
                }
            } else {
                values.add(p);
            }
        }
        for (String dependency : dependencies(d.spec())) {
            if (!byName.containsKey(dependency)) {
                throw new HtsTaskDefinitionException(
                        d.where(),
                        "depends on '" + dependency + "', which no @HtsTask" + " method of graph '" + graph
                                + "' declares; declared: " + new TreeSet<>(byName.keySet()));
            }
        }
        for (String waited : d.spec().waitsFor()) {
            if (Arrays.asList(after).contains(waited)) {
                throw new HtsTaskDefinitionException(
                        d.where(),
                        "names '" + waited + "' in both after and waitsFor;"
                                + " accepted: after when it reads the result (one parameter), waitsFor when it only runs after it");
            }
        }
        if (values.size() != after.length) {
            throw new HtsTaskDefinitionException(
                    d.where(),
                    "takes " + values.size() + " parameter(s) for its "
                            + after.length + " after dependencies " + Arrays.toString(after) + "; accepted: exactly one"
                            + " parameter per after dependency, in order (and, anywhere, a TaskContext); a task it only runs"
                            + " after, without its result, goes in waitsFor");
        }
        for (int i = 0; i < values.size(); i++) {
            Declared upstream = byName.get(after[i]);
            Class<?> produced = upstream.method().getReturnType();
            Class<?> wanted = values.get(i);
            boolean ok = produced == void.class ? !wanted.isPrimitive() : ClassUtils.isAssignable(wanted, produced);
            if (!ok) {
                throw new HtsTaskDefinitionException(
                        d.where(),
                        "parameter " + (i + 1) + " is a "
                                + wanted.getTypeName() + " but is bound to task '" + after[i] + "', whose method "
                                + upstream.where() + " returns " + produced.getTypeName()
                                + "; accepted: a parameter type it"
                                + " can be assigned to");
            }
        }
    }

    /** Every task this one runs after: the ones it reads, then the ones it only waits for. */
    private static String[] dependencies(HtsTask spec) {
        String[] all = Arrays.copyOf(spec.after(), spec.after().length + spec.waitsFor().length);
        System.arraycopy(spec.waitsFor(), 0, all, spec.after().length, spec.waitsFor().length);
        return all;
    }

    private static String describe(Method m) {
        return ClassUtils.getUserClass(m.getDeclaringClass()).getSimpleName() + "." + m.getName() + "("
                + Arrays.stream(m.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", "))
                + ")";
    }

    // ------------------------------------------------------------------ building

    private static TaskGraph build(String name, List<Declared> ordered, BeanFactory beans) {
        TaskGraph graph = TaskGraph.named(name);
        Map<String, Task<Object>> made = new HashMap<>();
        for (Declared d : ordered) {
            HtsTask spec = d.spec();
            TaskBuilder b = graph.task(d.name()).priority(spec.priority());
            List<Task<Object>> upstream = new ArrayList<>();
            for (String dependency : spec.after()) {
                upstream.add(made.get(dependency));
            }
            List<Task<Object>> all = new ArrayList<>(upstream);
            for (String waited : spec.waitsFor()) {
                all.add(made.get(waited));
            }
            b.after(all);
            if (spec.retries() >= 0) {
                b.retries(spec.retries());
            }
            if (!spec.timeout().isEmpty()) {
                b.timeout(DurationStyle.detectAndParse(spec.timeout()));
            }
            Invoker invoker = new Invoker(beans, d, upstream);
            TaskBody<Object> cpu = invoker::invoke;
            GpuBody<Object> gpu = invoker::invoke;
            Task<Object> task = switch (spec.device()) {
                case CPU -> b.cpu(cpu);
                case GPU -> b.gpu(gpu);
                case ANY -> b.bodies(cpu, gpu);
            };
            made.put(d.name(), task);
        }
        return graph;
    }

    /** Calls one method with its upstream results and context; the bean is looked up on first use. */
    private static final class Invoker {

        /** The bean and the method to call on it (on a proxy, the proxy's). */
        private record Bound(Object bean, Method method) {}

        private final BeanFactory beans;
        private final Declared declared;
        private final List<Task<Object>> upstream;
        private volatile @Nullable Bound bound;

        Invoker(BeanFactory beans, Declared declared, List<Task<Object>> upstream) {
            this.beans = beans;
            this.declared = declared;
            this.upstream = upstream;
        }

        private Bound bound() {
            Bound b = bound;
            if (b == null) { // two threads may both look it up; they get the same singleton
                Object bean = beans.getBean(declared.beanName());
                Method m = AopUtils.selectInvocableMethod(declared.method(), bean.getClass());
                ReflectionUtils.makeAccessible(m);
                b = new Bound(bean, m);
                bound = b;
            }
            return b;
        }

        @Nullable
        Object invoke(TaskContext ctx) throws Exception {
            Bound b = bound();
            Object bean = b.bean();
            Method m = b.method();
            Class<?>[] types = m.getParameterTypes();
            Object[] args = new Object[types.length];
            int value = 0;
            for (int i = 0; i < types.length; i++) {
                Class<?> p = types[i];
                if (TaskContext.class.isAssignableFrom(p)) {
                    args[i] = p.isInstance(ctx) ? ctx : ((GpuTaskContext) ctx).unwrap(p);
                } else {
                    args[i] = ctx.input(upstream.get(value++));
                }
            }
            try {
                return m.invoke(bean, args);
            } catch (InvocationTargetException ex) {
                Throwable cause = ex.getCause();
                if (cause instanceof Exception e) {
                    throw e;
                }
                if (cause instanceof Error e) {
                    throw e;
                }
                throw ex;
            }
        }
    }
}
