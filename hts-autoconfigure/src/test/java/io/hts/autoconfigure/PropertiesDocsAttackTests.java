package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Attacks on the generated property table of docs/configuration.md. */
class PropertiesDocsAttackTests {

    static JsonNode metadata() throws Exception {
        try (InputStream in =
                PropertiesDocsAttackTests.class.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            return JsonMapper.builder().build().readTree(in);
        }
    }

    static HtsProperties bind(Map<String, String> values) {
        return new Binder(new MapConfigurationPropertySource(values)).bindOrCreate("hts", HtsProperties.class);
    }

    static String camel(String kebab) {
        StringBuilder out = new StringBuilder();
        for (String segment : kebab.split("\\.")) {
            if (!out.isEmpty()) {
                out.append('.');
            }
            String[] words = segment.split("-");
            out.append(words[0]);
            for (int i = 1; i < words.length; i++) {
                out.append(Character.toUpperCase(words[i].charAt(0))).append(words[i].substring(1));
            }
        }
        return out.toString();
    }

    /** The table rows of docs/configuration.md: property -> default cell. */
    static Map<String, String> documentedDefaults() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "configuration.md"));
        String table = doc.substring(
                doc.indexOf(HtsPropertiesMetadataTests.BEGIN), doc.indexOf(HtsPropertiesMetadataTests.END));
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^\\| `(hts\\.[^`]+)` \\| ([^|]+) \\|").matcher(table);
        while (m.find()) {
            out.put(m.group(1), m.group(2).trim());
        }
        return out;
    }

    /** Every documented default is the value an application gets when it sets nothing. */
    @Test
    void everyDocumentedDefaultIsTheRealDefault() throws Exception {
        Map<String, String> documented = documentedDefaults();
        assertThat(documented).hasSizeGreaterThan(25);
        HtsProperties defaults = bind(Map.of());
        List<String> wrong = new ArrayList<>();
        documented.forEach((name, cell) -> {
            String path = camel(name.substring("hts.".length()));
            if (cell.equals("(unset)")) {
                Object v = new BeanWrapperImpl(defaults).getPropertyValue(path);
                if (v != null) {
                    wrong.add(name + " documented unset, is " + v);
                }
                return;
            }
            assertThat(cell).startsWith("`").endsWith("`");
            String value = cell.substring(1, cell.length() - 1);
            HtsProperties set = bind(Map.of(name, value));
            Object a = new BeanWrapperImpl(defaults).getPropertyValue(path);
            Object b = new BeanWrapperImpl(set).getPropertyValue(path);
            if (!java.util.Objects.equals(a, b)) {
                wrong.add(name + " documented " + value + " (binds to " + b + "), is " + a);
            }
        });
        assertThat(wrong).isEmpty();
    }

    /** Each row of the table has exactly three cells in GitHub Markdown (an unescaped | would split one). */
    @Test
    void everyRowHasThreeCells() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "configuration.md"));
        String table = doc.substring(
                doc.indexOf(HtsPropertiesMetadataTests.BEGIN), doc.indexOf(HtsPropertiesMetadataTests.END));
        for (String line : table.lines().skip(1).toList()) {
            String cells = line.replace("\\|", "");
            assertThat(cells.chars().filter(c -> c == '|').count()).as(line).isEqualTo(4);
        }
    }

    /**
     * The generator on metadata it may meet: a default containing |, a description over two
     * lines, a list default, Javadoc inline tags: each row must stay one row of three cells and
     * show the default.
     */
    @Test
    void theGeneratorKeepsOddValuesInOneRow() {
        String json = """
                {"properties": [
                  {"name": "hts.x.pipe-default", "defaultValue": "a|b", "description": "Separator."},
                  {"name": "hts.x.two-lines", "defaultValue": "1", "description": "First line.\\nSecond line."}
                ]}""";
        String table =
                HtsPropertiesMetadataTests.table(JsonMapper.builder().build().readTree(json));
        List<String> rows = table.lines().skip(2).toList();
        System.out.println("GENERATED:\n" + table);
        assertThat(rows).as("one row each").hasSize(2);
        for (String row : rows) {
            assertThat(row.replace("\\|", "").chars().filter(c -> c == '|').count())
                    .as(row)
                    .isEqualTo(4);
        }
    }

    /** A list property with a default (the processor writes it as a JSON array): the generator must show it. */
    @Test
    void theGeneratorShowsAListDefault() {
        String json = """
                {"properties": [{"name": "hts.x.list", "defaultValue": [0, 1], "description": "Ordinals."}]}""";
        String table =
                HtsPropertiesMetadataTests.table(JsonMapper.builder().build().readTree(json));
        assertThat(table.lines().skip(2).findFirst().orElseThrow()).contains("0", "1");
    }
}
