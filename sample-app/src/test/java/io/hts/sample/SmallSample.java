package io.hts.sample;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;

/**
 * The sample application at a test's scale ({@code application-small.properties}), its jobs not run
 * at start-up. One context, shared by the classes that use it.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@SpringBootTest(properties = "sample.run-jobs=false")
@ActiveProfiles("small")
public @interface SmallSample {}
