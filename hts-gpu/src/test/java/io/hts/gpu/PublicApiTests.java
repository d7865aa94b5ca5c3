package io.hts.gpu;

import io.hts.engine.support.PublicApiSnapshot;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Every public type and member of hts-gpu, held in {@code src/test/resources/public-api.txt} so that
 * the API grows only on purpose ({@code -Dhts.api.update=true} rewrites the file).
 */
class PublicApiTests {

    @Test
    void thePublicApiIsTheCheckedInOne() throws IOException {
        PublicApiSnapshot.assertUnchanged(
                Path.of("src/test/resources/public-api.txt"),
                PublicApiSnapshot.of("io.hts.gpu", p -> !p.contains(".internal")));
    }
}
