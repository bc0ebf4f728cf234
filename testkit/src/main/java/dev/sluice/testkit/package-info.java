/** Sluice testkit: embedded broker, Redis launcher, schema registry, fake Telegram, mock HTTP provider. */
package dev.sluice.testkit;
