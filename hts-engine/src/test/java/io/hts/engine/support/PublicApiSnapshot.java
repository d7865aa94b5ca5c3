package io.hts.engine.support;

import static org.assertj.core.api.Assertions.fail;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * A module's public API as text, one line per public type and per public or protected member of
 * it, compared with a file checked in beside the tests: the API changes only when that file changes
 * in the same commit. {@code -Dhts.api.update=true} rewrites the file instead of comparing.
 */
public final class PublicApiSnapshot {

    private PublicApiSnapshot() {}

    /**
     * The public API of the main classes under a package.
     *
     * @param rootPackage e.g. {@code io.hts.engine}
     * @param exported whether a package is part of the API (internal packages are not)
     * @return sorted lines
     */
    public static List<String> of(String rootPackage, Predicate<String> exported) {
        List<JavaClass> classes = new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                        .importPackages(rootPackage)
                        .stream()
                        .filter(c -> isApi(c, exported))
                        .sorted(Comparator.comparing(JavaClass::getName))
                        .toList();
        List<String> lines = new ArrayList<>();
        for (JavaClass c : classes) {
            lines.add(kind(c) + " " + c.getName() + supertypes(c));
            List<String> members = new ArrayList<>();
            for (JavaField f : c.getFields()) {
                if (visible(f.getModifiers()) && !f.getModifiers().contains(JavaModifier.SYNTHETIC)) {
                    members.add(
                            "  field " + f.getName() + " : " + f.getRawType().getName());
                }
            }
            for (JavaCodeUnit u : c.getCodeUnits()) {
                Set<JavaModifier> m = u.getModifiers();
                if (visible(m)
                        && !m.contains(JavaModifier.SYNTHETIC)
                        && !m.contains(JavaModifier.BRIDGE)
                        && !u.getName().equals("<clinit>")) {
                    String params = u.getRawParameterTypes().stream()
                            .map(JavaClass::getName)
                            .collect(Collectors.joining(", "));
                    members.add(
                            u.getName().equals("<init>")
                                    ? "  new(" + params + ")"
                                    : "  " + (m.contains(JavaModifier.STATIC) ? "static " : "") + u.getName() + "("
                                            + params + ") : "
                                            + u.getRawReturnType().getName());
                }
            }
            members.sort(null);
            lines.addAll(members);
        }
        return lines;
    }

    /**
     * Compares the API with its checked-in description, or rewrites it with {@code -Dhts.api.update=true}.
     *
     * @param snapshot the file, e.g. {@code src/test/resources/public-api.txt}
     * @param actual the API as {@link #of} describes it
     * @throws IOException when the file cannot be read or written
     */
    public static void assertUnchanged(Path snapshot, List<String> actual) throws IOException {
        if (Boolean.getBoolean("hts.api.update")) {
            Files.write(snapshot, actual, StandardCharsets.UTF_8);
            return;
        }
        List<String> expected =
                Files.exists(snapshot) ? Files.readAllLines(snapshot, StandardCharsets.UTF_8) : List.of();
        if (expected.equals(actual)) {
            return;
        }
        Set<String> added = new LinkedHashSet<>(qualified(actual));
        qualified(expected).forEach(added::remove);
        Set<String> removed = new LinkedHashSet<>(qualified(expected));
        qualified(actual).forEach(removed::remove);
        fail("The public API differs from " + snapshot + " (" + added.size() + " added, " + removed.size()
                + " removed). If the change is meant, rerun with -Dhts.api.update=true and commit the file with it;"
                + " if not, make the new members package-private or move them to an internal package.\nadded:\n  "
                + String.join("\n  ", added) + "\nremoved:\n  " + String.join("\n  ", removed));
    }

    /** Each member line prefixed with its type's line, so that a diff names the type a member belongs to. */
    private static List<String> qualified(List<String> lines) {
        List<String> out = new ArrayList<>();
        String type = "";
        for (String line : lines) {
            if (line.startsWith(" ")) {
                out.add(type + " ::" + line.substring(1));
            } else {
                type = line;
                out.add(line);
            }
        }
        return out;
    }

    private static boolean isApi(JavaClass c, Predicate<String> exported) {
        if (!c.getModifiers().contains(JavaModifier.PUBLIC)
                || c.isAnonymousClass()
                || c.isLocalClass()
                || !exported.test(c.getPackageName())) {
            return false;
        }
        return c.getEnclosingClass().map(outer -> isApi(outer, exported)).orElse(true);
    }

    private static boolean visible(Set<JavaModifier> modifiers) {
        return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED);
    }

    private static String kind(JavaClass c) {
        if (c.isAnnotation()) {
            return "annotation";
        }
        if (c.isEnum()) {
            return "enum";
        }
        if (c.isRecord()) {
            return "record";
        }
        if (c.isInterface()) {
            return "interface";
        }
        return (c.getModifiers().contains(JavaModifier.ABSTRACT) ? "abstract " : "")
                + (c.getModifiers().contains(JavaModifier.FINAL) ? "final " : "") + "class";
    }

    private static String supertypes(JavaClass c) {
        List<String> names = new ArrayList<>();
        c.getRawSuperclass()
                .filter(s -> !s.getName().equals("java.lang.Object")
                        && !s.getName().equals("java.lang.Enum")
                        && !s.getName().equals("java.lang.Record"))
                .ifPresent(s -> names.add(s.getName()));
        c.getRawInterfaces().forEach(i -> names.add(i.getName()));
        return names.isEmpty() ? "" : " : " + String.join(", ", names);
    }
}
