package io.hts.gpu.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.support.SimulatedCuda;
import org.junit.jupiter.api.Test;

class StreamManagerTests {

    private final SimulatedCuda cuda = new SimulatedCuda(1 << 20);

    @Test
    void leasesGoToTheLowestFreeStreamAndRunOut() {
        try (StreamManager streams = new StreamManager(cuda, 0, 3)) {
            StreamLease a = streams.tryAcquire();
            StreamLease b = streams.tryAcquire();
            StreamLease c = streams.tryAcquire();
            assertThat(a.lane()).isZero();
            assertThat(b.lane()).isOne();
            assertThat(c.lane()).isEqualTo(2);
            assertThat(streams.tryAcquire()).isNull();
            assertThat(streams.inUse()).isEqualTo(3);
            streams.release(b);
            assertThat(streams.tryAcquire()).isSameAs(b);
            streams.release(a);
            assertThatIllegalStateException()
                    .isThrownBy(() -> streams.release(a))
                    .withMessageContaining("not leased");
        }
    }

    @Test
    void crossStreamOrderIsAnEventWaitedOnTheDevice() {
        cuda.autoRun(false);
        try (StreamManager streams = new StreamManager(cuda, 0, 2)) {
            StreamLease producer = streams.tryAcquire();
            StreamLease consumer = streams.tryAcquire();
            byte[] order = new byte[2];
            int[] next = {0};
            cuda.kernel("mark", l -> order[next[0]++] = (byte) l.i64(0));
            CudaApi.Function mark = cuda.function(cuda.loadModule("mark"), "mark");
            cuda.launch(
                    mark,
                    io.hts.gpu.cuda.Dim3.of(1),
                    io.hts.gpu.cuda.Dim3.of(1),
                    0,
                    producer.stream(),
                    io.hts.gpu.cuda.KernelArguments.of().i64(1));
            streams.order(consumer.stream(), producer.stream());
            cuda.launch(
                    mark,
                    io.hts.gpu.cuda.Dim3.of(1),
                    io.hts.gpu.cuda.Dim3.of(1),
                    0,
                    consumer.stream(),
                    io.hts.gpu.cuda.KernelArguments.of().i64(2));
            cuda.synchronize(consumer.stream()); // runs the consumer's queue only: its wait runs the producer first
            assertThat(order).containsExactly(1, 2);
        }
    }

    @Test
    void aStreamCountBelowOneIsRefusedNamingTheProperty() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new StreamManager(cuda, 0, 0))
                .withMessageContaining("hts.gpu.streams-per-device must be at least 1, was 0");
    }
}
