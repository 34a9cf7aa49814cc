package dev.inbox.examples;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
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
  /**
   * Strict JSON: a repeated field, anything after the object, or a number that is not an integer
   * where one is expected is an error, never a guess. Money that was rounded or taken from the last
   * of two fields is money nobody asked for.
   */
  private static final ObjectMapper JSON =
      JsonMapper.builder()
          .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
          .build();

  /** The JSON body the producers send: {@code {"paymentId":..,"account":..,"amountCents":..}}. */
  public byte[] toJson() {
    ObjectNode node = JSON.createObjectNode();
    node.put("paymentId", paymentId);
    node.put("account", account);
    node.put("amountCents", amountCents);
    return node.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Parses a payment whose id is {@code key}: the Idempotency-Key, Kafka header or AMQP messageId
   * under which the inbox records it. A body may repeat the id in {@code paymentId}, but never name
   * another one: the payment id and the inbox key are one thing, or the same payment could be
   * credited once per key.
   *
   * @throws IllegalArgumentException naming the field that is wrong, and why
   */
  public static Payment fromJson(byte[] body, String key) {
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("the payment has no idempotency key to be its id");
    }
    JsonNode node;
    try {
      node = JSON.readTree(body);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "payment body is not strict JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new IllegalArgumentException("payment body is not JSON: " + e.getMessage(), e);
    }
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException("payment body must be a JSON object");
    }
    JsonNode account = node.get("account");
    if (account == null || !account.isTextual() || account.asText().isBlank()) {
      throw new IllegalArgumentException("\"account\" must be a non-blank JSON string");
    }
    JsonNode amount = node.get("amountCents");
    if (amount == null
        || !amount.isIntegralNumber()
        || !amount.canConvertToLong()
        || amount.longValue() <= 0) {
      throw new IllegalArgumentException(
          "\"amountCents\" must be a positive JSON integer of at most "
              + Long.MAX_VALUE
              + " (cents, no fraction or exponent), but was "
              + (amount == null ? "missing" : amount.toString()));
    }
    JsonNode id = node.get("paymentId");
    if (id != null && !(id.isTextual() && id.asText().equals(key))) {
      throw new IllegalArgumentException(
          "\"paymentId\" "
              + id
              + " differs from the idempotency key '"
              + key
              + "'; the key is the payment id, so leave \"paymentId\" out or repeat the key");
    }
    return new Payment(key, account.asText(), amount.longValue());
  }
}
