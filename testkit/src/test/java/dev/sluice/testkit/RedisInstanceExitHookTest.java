package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/**
 * The JVM exit hook of a redis-server this JVM started, with a real redis-server. An owner that stops its parts in
 * order from its own shutdown hook ({@code sluice dev}: senders, topology, then Redis) must not have Redis stopped
 * under it by this hook, which the JVM runs concurrently with the owner's; without close() the hook still stops it.
 */
class RedisInstanceExitHookTest {

    @Test
    void exitHookLeavesTheServerRunningUntilTheOwnerClosesIt() throws Exception {
        RedisInstance redis = RedisLauncher.localProcess().launchAt(0, null).stopOnExitOnlyAfterClose(Duration.ofSeconds(30));
        try {
            Thread hook = new Thread(redis::onJvmExit, "test-exit-hook");
            hook.start();
            // the hook parks waiting for close(); until then the owner's senders can still write their sent marks
            await().atMost(Duration.ofSeconds(10)).until(() -> hook.getState() == Thread.State.TIMED_WAITING);
            assertThat(redis.isRunning()).as("redis-server alive while the owner still stops its senders").isTrue();
            assertThat(redis.ping()).isTrue();

            redis.close(); // the owner's ordered stop reaches Redis
            hook.join(Duration.ofSeconds(10).toMillis());
            assertThat(hook.isAlive()).as("the hook returns once the owner closed Redis").isFalse();
            assertThat(redis.isRunning()).isFalse();
        } finally {
            redis.close();
        }
    }

    @Test
    void exitHookStillStopsALeftoverServerWhenTheOwnerNeverCloses() {
        RedisInstance redis = RedisLauncher.localProcess().launchAt(0, null).stopOnExitOnlyAfterClose(Duration.ofMillis(200));
        try {
            long pid = redis.pid();
            redis.onJvmExit(); // returns after the bound and the stop
            assertThat(redis.isRunning()).isFalse();
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        } finally {
            redis.close();
        }
    }

    @Test
    void withoutAnOwnerTheExitHookStopsTheServerAtOnce() {
        RedisInstance redis = RedisLauncher.localProcess().launchAt(0, null);
        try {
            redis.onJvmExit();
            assertThat(redis.isRunning()).isFalse();
        } finally {
            redis.close();
        }
    }
}
