package io.hts.engine;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The engine's layers, so that they change only on purpose. From the top: {@code cluster.internal}
 * (distribution) plugs into the run kernel through the kernel's hooks ({@code run.internal}), and
 * the kernel never knows it; {@code run} (runs, placement, the scheduler) uses every other package;
 * {@code fault} (Resilience4j's retries, time limits, the GPU's circuit breaker) and {@code observe}
 * (events, profiles) sit beside it; {@code exec} (the work-stealing pool and the device SPI) uses
 * only the graph's and the policies' types; {@code policy} reads the graph; {@code graph} (what
 * users build) knows only the fault settings a task declares; the cluster SPI ({@code cluster})
 * only graphs and health. And the engine is a plain library: no Spring, no Hazelcast, no CUDA.
 */
@AnalyzeClasses(packages = "io.hts.engine", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTests {

    @ArchTest
    static final ArchRule noSpringHazelcastNorCuda = noClasses()
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage(
                    "org.springframework..", "com.hazelcast..", "jcuda..", "io.hts.gpu..", "io.hts.autoconfigure..")
            .because("hts-engine is a plain Java library that Spring, the cluster and the GPU build on");

    @ArchTest
    static final ArchRule nothingReachesIntoTheRunLayer = noClasses()
            .that()
            .resideOutsideOfPackages("io.hts.engine.run..", "io.hts.engine.cluster.internal")
            .should()
            .dependOnClassesThat()
            .resideInAPackage("io.hts.engine.run..")
            .because("run is the top layer but for distribution: what is below it must not know how runs are"
                    + " carried out");

    @ArchTest
    static final ArchRule theKernelDoesNotKnowTheDistribution = noClasses()
            .that()
            .resideInAPackage("io.hts.engine.run..")
            .should()
            .dependOnClassesThat()
            .resideInAPackage("io.hts.engine.cluster.internal")
            .because("distribution plugs into the run kernel through the kernel's hooks (io.hts.engine.run.internal):"
                    + " the arrow goes from distribution to kernel only");

    @ArchTest
    static final ArchRule theHooksNameNoPartOfTheKernel = noClasses()
            .that()
            .resideInAPackage("io.hts.engine.run.internal")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage("io.hts.engine.exec.internal", "io.hts.engine.fault..", "io.hts.engine.observe..")
            .because("an extension sees the kernel through its hooks and its public API, never its machinery");

    @ArchTest
    static final ArchRule theDistributionUsesNoMachineryBelowTheKernel = noClasses()
            .that()
            .resideInAPackage("io.hts.engine.cluster.internal")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage("io.hts.engine.exec.internal", "io.hts.engine.fault..", "io.hts.engine.observe..")
            .because("distribution reaches the scheduler through the kernel's hooks and public API only");

    @ArchTest
    static final ArchRule theExecutorKnowsOnlyGraphsAndPolicies = noClasses()
            .that()
            .resideInAPackage("io.hts.engine.exec..")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage("io.hts.engine.run..", "io.hts.engine.fault..", "io.hts.engine.observe..")
            .because("the work-stealing pool and the device SPI are reused by every device module");

    @ArchTest
    static final ArchRule policiesReadTheGraphOnly = noClasses()
            .that()
            .resideInAPackage("io.hts.engine.policy..")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage(
                    "io.hts.engine.run..", "io.hts.engine.exec..", "io.hts.engine.fault..", "io.hts.engine.observe..")
            .because("a policy (an SPI users implement) sees tasks and statuses, never the machinery");

    @ArchTest
    static final ArchRule observationStaysOutOfTheMachinery = noClasses()
            .that()
            .resideInAPackage("io.hts.engine.observe..")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage("io.hts.engine.exec..", "io.hts.engine.fault..")
            .because("events and profiles describe runs; they do not drive them");

    @ArchTest
    static final ArchRule theClusterSpiKnowsOnlyGraphsAndHealth = noClasses()
            .that()
            .resideInAPackage("io.hts.engine.cluster")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage(
                    "io.hts.engine.run..", "io.hts.engine.exec..", "io.hts.engine.fault..", "io.hts.engine.observe..")
            .because("a second distributed engine implements the cluster SPI without the scheduler's machinery");

    @ArchTest
    static final ArchRule theGraphKnowsOnlyTheFaultSettingsOfItsTasks = noClasses()
            .that()
            .resideInAPackage("io.hts.engine.graph..")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage("io.hts.engine.exec..", "io.hts.engine.policy..", "io.hts.engine.observe..")
            .because("what users build is independent of how it is scheduled and observed");
}
