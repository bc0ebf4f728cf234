/** Sluice testkit. */
package dev.sluice.testkit;
