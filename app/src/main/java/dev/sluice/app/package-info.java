/** Sluice app. */
package dev.sluice.app;
