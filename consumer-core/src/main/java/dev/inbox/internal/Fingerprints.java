package dev.inbox.internal;

import static java.nio.charset.StandardCharsets.US_ASCII;

import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * SHA-256 fingerprints of requests, so that a key reused for a different request is detected.
 *
 * <p>One key space is shared by every channel (HTTP, Kafka, RabbitMQ), but a request and a message
 * carrying the same payment are different bytes. A fingerprint made by {@link #tagged} therefore
 * names the kind of thing it digests, and two fingerprints are compared only when they are of the
 * same kind ({@link #comparable}): a message re-sent with another amount is a mismatch, the same
 * payment sent once over HTTP and once over Kafka is a duplicate. Untagged fingerprints (the HTTP
 * filter's, or a caller's own bytes) are one kind of their own.
 */
public final class Fingerprints {
  /** The kind of the consumers' fingerprints: the SHA-256 of a message's body. */
  public static final String MESSAGE_KIND = "message";

  /** Starts every tagged fingerprint: "INBX", then the kind's length and the kind in ASCII. */
  private static final byte[] TAG_MAGIC = {'I', 'N', 'B', 'X'};

  private static final int MAX_KIND_LENGTH = 32;

  private static final int SHA256_LENGTH = 32;

  /**
   * The tag of {@link #MESSAGE_KIND}, made once: a consumer fingerprints every message it reads, so
   * {@link #ofMessage} writes the tag and the digest straight into the fingerprint.
   */
  private static final byte[] MESSAGE_TAG = tagged(MESSAGE_KIND, new byte[0]);

  /**
   * Cloned for each digest: cheaper than {@link MessageDigest#getInstance}, which looks the
   * algorithm up among the security providers every time.
   */
  private static final MessageDigest SHA256_PROTOTYPE = lookUpSha256();

  private Fingerprints() {}

  /** The fingerprint of a message's body, of kind {@link #MESSAGE_KIND}. */
  public static byte[] ofMessage(byte[] body) {
    byte[] fingerprint = Arrays.copyOf(MESSAGE_TAG, MESSAGE_TAG.length + SHA256_LENGTH);
    MessageDigest digest = newDigest();
    digest.update(body == null ? new byte[0] : body);
    try {
      digest.digest(fingerprint, MESSAGE_TAG.length, SHA256_LENGTH);
    } catch (DigestException e) {
      throw new IllegalStateException("a SHA-256 digest is 32 bytes; this indicates a bug", e);
    }
    return fingerprint;
  }

  /**
   * The digest marked as being of the given kind (1 to 32 printable ASCII characters), so that it
   * is compared only with fingerprints of the same kind.
   */
  public static byte[] tagged(String kind, byte[] digest) {
    if (kind == null
        || kind.isEmpty()
        || kind.length() > MAX_KIND_LENGTH
        || !kind.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
      throw new IllegalArgumentException(
          "a fingerprint kind must be 1 to "
              + MAX_KIND_LENGTH
              + " printable ASCII characters, but was '"
              + kind
              + "'");
    }
    byte[] tagged = new byte[TAG_MAGIC.length + 1 + kind.length() + digest.length];
    System.arraycopy(TAG_MAGIC, 0, tagged, 0, TAG_MAGIC.length);
    tagged[TAG_MAGIC.length] = (byte) kind.length();
    byte[] kindBytes = kind.getBytes(US_ASCII);
    System.arraycopy(kindBytes, 0, tagged, TAG_MAGIC.length + 1, kindBytes.length);
    System.arraycopy(digest, 0, tagged, TAG_MAGIC.length + 1 + kindBytes.length, digest.length);
    return tagged;
  }

  /**
   * The kind a fingerprint was {@link #tagged} with, or the empty string for an untagged one: one
   * that does not start with "INBX", a kind length of 1 to 32 and that many bytes.
   */
  public static String kind(byte[] fingerprint) {
    int tag = tagLength(fingerprint);
    return tag == 0
        ? ""
        : new String(fingerprint, TAG_MAGIC.length + 1, tag - TAG_MAGIC.length - 1, US_ASCII);
  }

  /**
   * Whether two fingerprints can tell a different request apart: both are present and of the same
   * {@link #kind}. Where they are not comparable, a key's reuse is never a mismatch. Kinds are
   * compared byte for byte, as the inbox's SQL compares them.
   */
  public static boolean comparable(byte[] first, byte[] second) {
    return first != null
        && second != null
        && Arrays.equals(first, 0, tagLength(first), second, 0, tagLength(second));
  }

  /** Whether a new claim with {@code presented} mismatches a record holding {@code recorded}. */
  public static boolean mismatch(byte[] recorded, byte[] presented) {
    return comparable(recorded, presented) && !Arrays.equals(recorded, presented);
  }

  /** The length of the fingerprint's tag (magic, kind length and kind), or 0 when untagged. */
  private static int tagLength(byte[] fingerprint) {
    if (fingerprint == null
        || fingerprint.length <= TAG_MAGIC.length
        || !Arrays.equals(fingerprint, 0, TAG_MAGIC.length, TAG_MAGIC, 0, TAG_MAGIC.length)) {
      return 0;
    }
    int length = fingerprint[TAG_MAGIC.length]; // signed: a byte above 127 is no kind's length
    if (length < 1
        || length > MAX_KIND_LENGTH
        || fingerprint.length < TAG_MAGIC.length + 1 + length) {
      return 0;
    }
    return TAG_MAGIC.length + 1 + length;
  }

  /** The SHA-256 of the bytes. */
  public static byte[] sha256(byte[] bytes) {
    return newDigest().digest(bytes);
  }

  /** The SHA-256 of the UTF-8 bytes of the text. */
  public static byte[] sha256(String text) {
    return sha256(text.getBytes(StandardCharsets.UTF_8));
  }

  /** A fresh SHA-256 digest, for callers that feed several parts. */
  public static MessageDigest newDigest() {
    try {
      return (MessageDigest) SHA256_PROTOTYPE.clone();
    } catch (CloneNotSupportedException e) {
      return lookUpSha256(); // a provider whose digest cannot be cloned
    }
  }

  private static MessageDigest lookUpSha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform must support SHA-256", e);
    }
  }
}
