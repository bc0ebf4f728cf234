/** Sluice sender. */
package dev.sluice.sender;
