/**
 * The Sluice Kafka Streams topology (DESIGN.md, Topology): {@link dev.sluice.topology.SluiceTopology} is the pure
 * factory, {@link dev.sluice.topology.TopologyService} runs it, {@link dev.sluice.topology.TopologyConfig} holds its
 * configuration and {@link dev.sluice.topology.TopicBootstrap} creates missing topics.
 */
package dev.sluice.topology;
