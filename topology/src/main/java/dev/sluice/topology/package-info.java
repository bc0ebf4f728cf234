/** Sluice topology. */
package dev.sluice.topology;
