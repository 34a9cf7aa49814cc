package dev.inbox.examples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * One payment: an id that is also its idempotency key, an account and an amount.
 *
 * @param paymentId the idempotency key
 * @param account the account credited
 * @param amountCents the amount, positive
 */
public record Payment(String paymentId, String account, long amountCents) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The JSON body the producers send: {@code {"paymentId":..,"account":..,"amountCents":..}}. */
  public byte[] toJson() {
    ObjectNode node = JSON.createObjectNode();
    node.put("paymentId", paymentId);
    node.put("account", account);
    node.put("amountCents", amountCents);
    return node.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Parses a payment; the id may come from elsewhere (a header, the messageId) when the body has
   * none.
   *
   * @throws IllegalArgumentException naming what is wrong with the body
   */
  public static Payment fromJson(byte[] body, String paymentId) {
    JsonNode node;
    try {
      node = JSON.readTree(body);
    } catch (IOException e) {
      throw new IllegalArgumentException("payment body is not JSON: " + e.getMessage(), e);
    }
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException("payment body must be a JSON object");
    }
    JsonNode account = node.get("account");
    JsonNode amount = node.get("amountCents");
    if (account == null || !account.isTextual() || account.asText().isBlank()) {
      throw new IllegalArgumentException("payment needs a non-blank string \"account\"");
    }
    if (amount == null || !amount.canConvertToLong() || amount.asLong() <= 0) {
      throw new IllegalArgumentException("payment needs a positive integer \"amountCents\"");
    }
    String id = node.hasNonNull("paymentId") ? node.get("paymentId").asText() : paymentId;
    return new Payment(id, account.asText(), amount.asLong());
  }
}
