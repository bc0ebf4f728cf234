/** Sluice limits. */
package dev.sluice.limits;
