package io.hts.autoconfigure.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.support.DashboardApp;
import io.hts.autoconfigure.support.LocalHttp;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The dashboard over real HTTP: served by the htsdashboard endpoint only when enabled and exposed,
 * its files and nothing else, on the management server's port and base path, told where the
 * endpoints it reads are.
 */
class HtsDashboardEndpointHttpTests {

    private static ConfigurableApplicationContext start(String... properties) {
        String[] all = new String[properties.length + 4];
        all[0] = "server.port=0";
        all[1] = "server.address=127.0.0.1";
        all[2] = "spring.main.banner-mode=off";
        all[3] = "hts.executor.threads=2";
        System.arraycopy(properties, 0, all, 4, properties.length);
        return new SpringApplicationBuilder(DashboardApp.class)
                .web(WebApplicationType.SERVLET)
                .properties(all)
                .run();
    }

    @Test
    void theDashboardItsFilesAndEChartsAreServedAndNothingElse() throws Exception {
        try (ConfigurableApplicationContext context = start(
                "hts.dashboard.enabled=true",
                "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard")) {
            int port = LocalHttp.port(context);
            HttpResponse<String> page = LocalHttp.get(port, "/actuator/htsdashboard", "Accept", "text/html");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Type"))
                    .get()
                    .asString()
                    .startsWith("text/html");
            assertThat(page.body())
                    .contains("<title>HTS dashboard</title>")
                    .contains(
                            "<script id=\"hts-config\" type=\"application/json\">{\"hts\":\"hts\","
                                    + "\"htsprofiler\":\"htsprofiler\",\"htsevents\":\"htsevents\",\"htsdashboard\":\"htsdashboard\"}")
                    .doesNotContain("<!-- hts-config -->")
                    .doesNotContain("//cdn", "https://", "http://");
            for (String file : new String[] {"dashboard.js", "pages.js", "run.js"}) {
                HttpResponse<String> js = LocalHttp.get(port, "/actuator/htsdashboard/" + file);
                assertThat(js.statusCode()).as(file).isEqualTo(200);
                assertThat(js.headers().firstValue("Content-Type"))
                        .get()
                        .asString()
                        .startsWith("text/javascript");
            }
            HttpResponse<String> css = LocalHttp.get(port, "/actuator/htsdashboard/dashboard.css");
            assertThat(css.headers().firstValue("Content-Type"))
                    .get()
                    .asString()
                    .startsWith("text/css");
            HttpResponse<String> echarts = LocalHttp.get(port, "/actuator/htsdashboard/lib/echarts.min.js");
            assertThat(echarts.statusCode()).isEqualTo(200);
            assertThat(echarts.body()).contains("echarts");
            for (String refused : new String[] {
                "/actuator/htsdashboard/index.html.bak",
                "/actuator/htsdashboard/nothing.js",
                "/actuator/htsdashboard/lib/zrender.js",
                "/actuator/htsdashboard/a/b/c.js",
                "/actuator/htsdashboard/..%2Fapplication.properties",
                "/actuator/htsdashboard/HtsDashboardEndpoint.class"
            }) {
                // 404, or Tomcat's 400 for an encoded slash
                assertThat(LocalHttp.get(port, refused).statusCode())
                        .as(refused)
                        .isIn(400, 404);
            }
            assertThat(LocalHttp.get(port, "/actuator").body()).contains("htsdashboard");
        }
    }

    @Test
    void offUnlessEnabledAndExposed() throws Exception {
        try (ConfigurableApplicationContext context =
                start("management.endpoints.web.exposure.include=*", "hts.dashboard.enabled=false")) {
            assertThat(LocalHttp.get(LocalHttp.port(context), "/actuator/htsdashboard")
                            .statusCode())
                    .isEqualTo(404);
            assertThat(context.getBeansOfType(HtsDashboardEndpoint.class)).isEmpty();
        }
        try (ConfigurableApplicationContext context =
                start("management.endpoints.web.exposure.include=hts", "hts.dashboard.enabled=true")) {
            assertThat(LocalHttp.get(LocalHttp.port(context), "/actuator/htsdashboard")
                            .statusCode())
                    .isEqualTo(404);
        }
    }

    @Test
    void onTheManagementServerWithItsBasePathAndTheEndpointsPathMappings() throws Exception {
        try (ConfigurableApplicationContext context = start(
                "hts.dashboard.enabled=true",
                "management.server.port=0",
                "management.server.address=127.0.0.1",
                "management.endpoints.web.base-path=/ops",
                "management.endpoints.web.path-mapping.hts=scheduler",
                "management.endpoints.web.path-mapping.htsdashboard=dashboard",
                "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard")) {
            int management = Integer.parseInt(context.getEnvironment().getRequiredProperty("local.management.port"));
            int main = LocalHttp.port(context);
            assertThat(management).isNotEqualTo(main);
            HttpResponse<String> page = LocalHttp.get(management, "/ops/dashboard");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("{\"hts\":\"scheduler\",").contains("\"htsdashboard\":\"dashboard\"");
            assertThat(LocalHttp.get(management, "/ops/dashboard/dashboard.js").statusCode())
                    .isEqualTo(200);
            assertThat(LocalHttp.get(management, "/ops/scheduler").statusCode()).isEqualTo(200);
            assertThat(LocalHttp.get(main, "/ops/dashboard").statusCode()).isEqualTo(404);
            assertThat(LocalHttp.get(main, "/actuator/htsdashboard").statusCode())
                    .isEqualTo(404);
        }
    }

    @Test
    void configValuesAreEscapedForAScriptElement() {
        assertThat(HtsDashboardEndpoint.json(java.util.Map.of("hts", "</script><b a=\"x\\\" & >")))
                .isEqualTo("{\"hts\":\"\\u003c/script\\u003e\\u003cb a=\\u0022x\\u005c\\u0022 \\u0026 \\u003e\"}");
    }
}
