package io.hts.autoconfigure.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.logging.Level;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * A real headless Chromium for the dashboard's tests: Debian's {@code chromium} and
 * {@code chromium-driver}, named explicitly (Selenium Manager cannot download anything here).
 * Without them the test classes that use {@link Condition} are skipped, saying why, before their
 * application starts; unless {@code HTS_BROWSER_TESTS=required} (CI), where they fail.
 */
public final class Browser implements AutoCloseable {

    /** Debian's Chromium, or the system property hts.test.chromium's path. */
    static final Path CHROMIUM = Path.of(System.getProperty("hts.test.chromium", "/usr/bin/chromium"));
    /** Debian's ChromeDriver, or the system property hts.test.chromedriver's path. */
    static final Path CHROMEDRIVER = Path.of(System.getProperty("hts.test.chromedriver", "/usr/bin/chromedriver"));
    /** Where the screenshots go (the module's target folder). */
    public static final Path SCREENSHOTS = Path.of("target", "dashboard-screenshots");

    private final ChromeDriver driver;

    private Browser(ChromeDriver driver) {
        this.driver = driver;
    }

    /** Why the browser tests cannot run here (Chromium or its driver missing), or null when they can. */
    public static @Nullable String missing() {
        if (!Files.isExecutable(CHROMIUM)) {
            return CHROMIUM + " (Debian package chromium) is missing";
        }
        if (!Files.isExecutable(CHROMEDRIVER)) {
            return CHROMEDRIVER + " (Debian package chromium-driver) is missing";
        }
        return null;
    }

    /** Whether the browser tests must run (CI: HTS_BROWSER_TESTS=required), and so fail without a browser. */
    static boolean required() {
        return "required".equals(System.getenv("HTS_BROWSER_TESTS"));
    }

    /**
     * Skips a test class without a browser, before its application starts, saying why; unless
     * HTS_BROWSER_TESTS=required, where the class runs and fails in {@link #start()}.
     */
    public static final class Condition implements ExecutionCondition {

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            String missing = missing();
            return missing == null || required()
                    ? ConditionEvaluationResult.enabled("a browser is installed, or required")
                    : ConditionEvaluationResult.disabled("no browser for the dashboard's tests: " + missing
                            + "; install it with apt-get install -y chromium chromium-driver");
        }
    }

    /** Starts Chromium; fails saying what is missing when it cannot. */
    public static Browser start() {
        String missing = missing();
        if (missing != null) {
            Assertions.fail("no browser for the dashboard's tests: " + missing
                    + "; install it with apt-get install -y chromium chromium-driver"
                    + (required() ? " (HTS_BROWSER_TESTS=required)" : ""));
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments(
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--disable-extensions",
                "--window-size=1400,1000");
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                .build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
        driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(30));
        return new Browser(driver);
    }

    /** The driver. */
    public WebDriver driver() {
        return driver;
    }

    /** Opens a page and returns once it has loaded (an open event stream must not hold the load up). */
    public void open(String url) {
        driver.get(url);
        assertThat(driver.executeScript("return document.readyState")).isEqualTo("complete");
    }

    /** The elements a CSS selector finds now. */
    public List<WebElement> all(String css) {
        return driver.findElements(By.cssSelector(css));
    }

    /** Runs a script in the page. */
    public Object script(String script, Object... args) {
        return ((JavascriptExecutor) driver).executeScript(script, args);
    }

    /** The browser console's errors since the last call (SEVERE entries: script errors, failed loads). */
    public List<String> consoleErrors() {
        return driver.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
                .map(LogEntry::getMessage)
                .toList();
    }

    /** Writes a screenshot of the window to {@code target/dashboard-screenshots/NAME.png}. */
    public Path screenshot(String name) throws IOException {
        Files.createDirectories(SCREENSHOTS);
        Path file = SCREENSHOTS.resolve(name + ".png");
        Files.write(file, ((TakesScreenshot) driver).getScreenshotAs(OutputType.BYTES));
        return file;
    }

    @Override
    public void close() {
        driver.quit();
    }
}
