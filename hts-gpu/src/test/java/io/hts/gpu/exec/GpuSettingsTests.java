package io.hts.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.hts.gpu.cuda.Dim3;
import io.hts.gpu.cuda.KernelArguments;
import io.hts.gpu.memory.PoolSettings;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class GpuSettingsTests {

    @Test
    void defaultsStartWithOneArenaAndGrowToTheMaximum() {
        GpuSettings s = GpuSettings.defaults(8L << 30);
        assertThat(s.streams()).isEqualTo(4);
        assertThat(s.memory().initialBytes()).isEqualTo(PoolSettings.DEFAULT_ARENA);
        assertThat(s.memory().maximumBytes()).isEqualTo(8L << 30);
        assertThat(s.spinWhileBusy()).isFalse();
        assertThat(s.withStreams(2).streams()).isEqualTo(2);
        assertThat(s.withSpinWhileBusy(true).spinWhileBusy()).isTrue();
        assertThat(GpuSettings.defaults(64L << 20).memory().initialBytes()).isEqualTo(64L << 20);
    }

    @Test
    void badSettingsSayWhatIsAccepted() {
        GpuSettings s = GpuSettings.defaults(1L << 30);
        assertThatIllegalArgumentException()
                .isThrownBy(() -> s.withStreams(0))
                .withMessageContaining("hts.gpu.streams-per-device must be at least 1, was 0");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new GpuSettings(1, s.memory(), 1000, Duration.ZERO, false))
                .withMessageContaining("power of two of at least 4096 bytes, was 1000");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new GpuSettings(1, s.memory(), 4096, Duration.ofNanos(-1), false))
                .withMessageContaining("hts.gpu.poll-spin must be 0 or more");
    }

    @Test
    void launchDimensionsAndArgumentsAreChecked() {
        assertThat(Dim3.blocksFor(1000, 256)).isEqualTo(new Dim3(4, 1, 1));
        assertThat(Dim3.blocksFor(0, 256)).isEqualTo(Dim3.of(1));
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new Dim3(0, 1, 1))
                .withMessageContaining("at least 1, were (0, 1, 1)");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Dim3.blocksFor(1L << 50, 32))
                .withMessageContaining("blocks of 32 threads");
        KernelArguments args =
                KernelArguments.of().pointer(0x1000).i32(3).i64(4).f32(1.5f).f64(2.5);
        assertThat(args.arguments())
                .extracting(KernelArguments.Argument::kind)
                .containsExactly(
                        KernelArguments.Kind.POINTER,
                        KernelArguments.Kind.I32,
                        KernelArguments.Kind.I64,
                        KernelArguments.Kind.F32,
                        KernelArguments.Kind.F64);
    }
}
