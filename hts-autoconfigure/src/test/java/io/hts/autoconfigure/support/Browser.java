package io.hts.autoconfigure.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.logging.Level;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
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
 * Without them the tests are skipped, saying why, unless {@code HTS_BROWSER_TESTS=required}
 * (CI), where they fail.
 */
public final class Browser implements AutoCloseable {

    static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    /** Where the screenshots go (the module's target folder). */
    public static final Path SCREENSHOTS = Path.of("target", "dashboard-screenshots");

    private final ChromeDriver driver;

    private Browser(ChromeDriver driver) {
        this.driver = driver;
    }

    /** Starts Chromium, or skips (fails, with HTS_BROWSER_TESTS=required) the test class when it is not installed. */
    public static Browser start() {
        String missing = !Files.isExecutable(CHROMIUM)
                ? CHROMIUM + " (Debian package chromium)"
                : !Files.isExecutable(CHROMEDRIVER) ? CHROMEDRIVER + " (Debian package chromium-driver)" : null;
        if (missing != null) {
            String reason = "no browser for the dashboard's tests: " + missing + " is missing; install it with"
                    + " apt-get install -y chromium chromium-driver";
            if ("required".equals(System.getenv("HTS_BROWSER_TESTS"))) {
                Assertions.fail(reason + " (HTS_BROWSER_TESTS=required)");
            }
            Assumptions.abort(reason);
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
