/** Sluice schemas. */
package dev.sluice.schemas;
