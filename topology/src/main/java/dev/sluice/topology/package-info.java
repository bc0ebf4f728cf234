/**
 * The Sluice Kafka Streams topology (DESIGN.md, Topology; issue 5): {@link dev.sluice.topology.SluiceTopology} is
 * the pure factory (node, store and topic names, and how to account for every input id),
 * {@link dev.sluice.topology.RouteProcessor} the per-lane routing (chat status, deadlines, schedules, classes,
 * digests, pressure, policy), {@link dev.sluice.topology.TopologyService} runs it,
 * {@link dev.sluice.topology.TopologyConfig} holds its configuration, {@link dev.sluice.topology.TopologyCounters}
 * reports its decisions for metrics and {@link dev.sluice.topology.TopicBootstrap} creates missing topics.
 */
package dev.sluice.topology;
