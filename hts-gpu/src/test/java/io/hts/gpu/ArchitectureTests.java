package io.hts.gpu;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * What hts-gpu may use of the engine: its SPIs only (the device backend and tasks of {@code exec},
 * the graph's types, the policies' statuses), never how runs are carried out, never Spring; and
 * JCuda stays behind {@code io.hts.gpu.cuda}, {@code blas} and {@code kernel}.
 */
@AnalyzeClasses(packages = "io.hts.gpu", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTests {

    @ArchTest
    static final ArchRule onlyTheEnginesSpis = noClasses()
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage(
                    "io.hts.engine.run..",
                    "io.hts.engine.observe..",
                    "io.hts.engine.fault..",
                    "io.hts.engine..internal..",
                    "org.springframework..",
                    "com.hazelcast..",
                    "io.hts.autoconfigure..")
            .because("a device module plugs into the engine through its SPIs and knows nothing of Spring");

    @ArchTest
    static final ArchRule cuBlasOnlyThroughTheBlasPackage = noClasses()
            .that()
            .resideInAnyPackage("io.hts.gpu.memory..", "io.hts.gpu.parallel..")
            .should()
            .dependOnClassesThat()
            .resideInAPackage("jcuda.jcublas..")
            .because("cuBLAS is reached through io.hts.gpu.blas");
}
