package io.hts.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.support.PublicApiSnapshot;
import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What hts-engine shows its users: the packages {@code module-info} exports (every package of the
 * module is exported or internal), and every public type and member of them, held in
 * {@code src/test/resources/public-api.txt} so that the API grows only on purpose.
 */
class ModuleBoundaryTests {

    private static final Set<String> API = Set.of(
            "io.hts.engine.graph",
            "io.hts.engine.run",
            "io.hts.engine.policy",
            "io.hts.engine.fault",
            "io.hts.engine.observe",
            "io.hts.engine.exec",
            "io.hts.engine.cluster");

    private static ModuleDescriptor descriptor() throws IOException {
        try (InputStream in = Files.newInputStream(Path.of("target/classes/module-info.class"))) {
            return ModuleDescriptor.read(in);
        }
    }

    @Test
    void theModuleExportsTheUserPackagesToEveryoneAndNoInternalOne() throws IOException {
        ModuleDescriptor module = descriptor();
        assertThat(module.name()).isEqualTo("io.hts.engine");
        assertThat(module.exports())
                .allSatisfy(e -> assertThat(e.isQualified()).as("%s", e).isFalse());
        assertThat(module.exports().stream()
                        .map(ModuleDescriptor.Exports::source)
                        .collect(Collectors.toSet()))
                .isEqualTo(API);
        assertThat(module.packages())
                .allSatisfy(p -> assertThat(API.contains(p) || p.endsWith(".internal"))
                        .as("package %s is exported or internal (a new package must choose)", p)
                        .isTrue());
        assertThat(module.requires().stream().map(ModuleDescriptor.Requires::name))
                .noneMatch(n -> n.startsWith("spring") || n.startsWith("com.hazelcast") || n.startsWith("jcuda"));
    }

    @Test
    void thePublicApiIsTheCheckedInOne() throws IOException {
        List<String> api = PublicApiSnapshot.of("io.hts.engine", API::contains);
        assertThat(api)
                .as("no public signature hands out or takes an internal type")
                .noneMatch(l -> l.contains(".internal."));
        PublicApiSnapshot.assertUnchanged(Path.of("src/test/resources/public-api.txt"), api);
    }
}
