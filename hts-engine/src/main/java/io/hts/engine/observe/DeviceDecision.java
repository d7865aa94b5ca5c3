package io.hts.engine.observe;

import io.hts.engine.graph.Device;
import io.hts.engine.policy.SystemStatus;
import io.hts.engine.policy.TaskInfo;

/**
 * Why a task ran where it did: the policy's inputs and its choice.
 *
 * @param policy the policy's name
 * @param task what the policy knew about the task (devices, estimates)
 * @param status the devices' load the policy saw
 * @param chosen the device the policy returned
 * @param used the device the task was sent to (differs from {@code chosen} only when the policy
 *     chose a device the task cannot use)
 */
public record DeviceDecision(String policy, TaskInfo task, SystemStatus status, Device chosen, Device used) {}
