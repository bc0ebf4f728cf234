package dev.sluice.testkit;

/**
 * One request of a sending or editing method to {@link FakeTelegram} and the answer it got, in arrival order (accepted
 * or not); see {@link FakeTelegram#calls()}.
 *
 * @param botId the token's id part; never the token
 * @param chatId the chat id as sent (normalised when it is valid)
 * @param text the message text (null if none)
 * @param atMillis when the fake decided the answer, by its clock
 * @param status the HTTP status answered; 0 when the connection was dropped without an answer
 * @param method the method as the request spelled it ({@code sendMessage}, ...)
 */
public record FakeTelegramCall(String botId, String chatId, String text, long atMillis, int status, String method) {
}
