package dev.inbox.spring.web;

import static org.springframework.security.config.Customizer.withDefaults;

import dev.inbox.http.ScopeResolver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.net.URI;
import java.security.Principal;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.TestComponent;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.WebSecurityCustomizer;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.firewall.StrictHttpFirewall;
import org.springframework.transaction.annotation.Isolation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.interceptor.TransactionAspectSupport;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The web application the @Idempotent tests boot: payment endpoints that write through JdbcTemplate
 * and JPA, HTTP Basic users alice and bob (anonymous requests are let in too), and springdoc. A
 * {@code @TestConfiguration}, so that the starter's other tests, which scan this package, never
 * pick it or its nested controllers up.
 */
@TestConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
@Import({WebTestApplication.Payments.class, WebTestApplication.Security.class})
public class WebTestApplication {
  static final String SCHEMA = "boot_web";

  /** Lets a test hold the first request inside its handler. */
  static volatile CountDownLatch entered = new CountDownLatch(0);

  static volatile CountDownLatch release = new CountDownLatch(0);

  /** Whether /unstored answers 503 after its writes. */
  static final AtomicBoolean failUnstored = new AtomicBoolean();

  /**
   * Payments: one JDBC row and one JPA row per effect, with the request body as the marker. A
   * {@code @TestComponent}, so that component scans of this package leave it out.
   */
  @RestController
  @TestComponent
  static class Payments {
    private final JdbcTemplate jdbc;

    @PersistenceContext private EntityManager entityManager;

    Payments(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Idempotent
    @Transactional
    @PostMapping(value = "/pay", consumes = "text/plain")
    ResponseEntity<Map<String, Object>> pay(@RequestBody String body, Principal principal) {
      String payer = principal == null ? "anonymous" : principal.getName();
      return ResponseEntity.created(URI.create("/pay/" + write(payer, body)))
          .body(Map.of("payer", payer, "body", body));
    }

    /** Holds the request until the test releases it, so that another one finds it in flight. */
    @Idempotent
    @Transactional
    @PostMapping(value = "/held", consumes = "text/plain")
    ResponseEntity<Map<String, Object>> held(@RequestBody String body) throws Exception {
      long id = write("held", body);
      entered.countDown();
      if (!release.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the test never released the held request");
      }
      return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("id", id));
    }

    /** Writes, then answers 500 (a status that is not stored): the writes must roll back. */
    @Idempotent
    @Transactional
    @PostMapping(value = "/unstored", consumes = "text/plain")
    ResponseEntity<String> unstored(@RequestBody String body) {
      write("unstored", body);
      return failUnstored.get()
          ? ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("try again")
          : ResponseEntity.ok("done");
    }

    /** Writes, then throws: the container's error handling answers, the writes roll back. */
    @Idempotent
    @Transactional
    @PostMapping(value = "/throws", consumes = "text/plain")
    String throwing(@RequestBody String body) {
      write("throws", body);
      throw new IllegalStateException("the payment provider refused");
    }

    /** Writes, marks the transaction rollback-only and answers 200: that answer would be a lie. */
    @Idempotent
    @Transactional
    @PostMapping(value = "/rollback-only", consumes = "text/plain")
    String rollbackOnly(@RequestBody String body) {
      write("rollback-only", body);
      TransactionAspectSupport.currentTransactionStatus().setRollbackOnly();
      return "ok";
    }

    /** Without a key it runs as if it were not annotated, in its own transaction. */
    @Idempotent(keyRequired = false)
    @Transactional
    @PostMapping(value = "/optional", consumes = "text/plain")
    String optional(@RequestBody String body) {
      write("optional", body);
      return "ok";
    }

    /** No @Transactional of its own: the transaction begun for the key holds the writes. */
    @Idempotent
    @PostMapping(value = "/no-transactional", consumes = "text/plain")
    String noTransactional(@RequestBody String body) {
      write("no-transactional", body);
      return "ok";
    }

    /** The transaction begun for the key is the one the method's @Transactional describes. */
    @Idempotent
    @Transactional(isolation = Isolation.SERIALIZABLE)
    @PostMapping(value = "/isolation", consumes = "text/plain")
    String isolation(@RequestBody String body) {
      write("isolation", body);
      return jdbc.queryForObject("SHOW transaction_isolation", String.class);
    }

    /**
     * Writes through JdbcTemplate, then persists a JPA row under the id in the body: a second
     * request with that id fails only when Hibernate flushes the INSERT.
     */
    @Idempotent
    @Transactional
    @PostMapping(value = "/jpa-id", consumes = "text/plain")
    String jpaId(@RequestBody String body) {
      jdbc.update(
          "INSERT INTO " + SCHEMA + ".payments (payer, body) VALUES (?, ?)", "jpa-id", body);
      entityManager.persist(new JpaPayment(body.substring(0, body.indexOf(' ')), "jpa-id", body));
      return "ok";
    }

    /** Shares its keys with a listener of consumer group "payments-group". */
    @Idempotent(scopeResolver = "paymentsGroup")
    @Transactional
    @PostMapping(value = "/group-pay", consumes = "text/plain")
    String groupPay(@RequestBody String body) {
      write("group", body);
      return "ok";
    }

    /**
     * Takes a form upload: a request with a key is refused by the filter (it would read the parts
     * for the fingerprint before the application could), so the method never runs with one.
     */
    @Idempotent
    @Transactional
    @PostMapping(value = "/upload", consumes = "multipart/form-data")
    String upload(@org.springframework.web.bind.annotation.RequestParam String note) {
      write("upload", note);
      return "ok";
    }

    /** Not idempotent: documented without the header, and never claimed. */
    @PostMapping(value = "/plain", consumes = "text/plain")
    String plain(@RequestBody String body) {
      return "plain";
    }

    @GetMapping("/pay/{id}")
    String payment(@org.springframework.web.bind.annotation.PathVariable long id) {
      return "payment " + id;
    }

    private long write(String payer, String body) {
      entityManager.persist(new JpaPayment(payer, body));
      return jdbc.queryForObject(
          "INSERT INTO " + SCHEMA + ".payments (payer, body) VALUES (?, ?) RETURNING id",
          Long.class,
          payer,
          body);
    }
  }

  /** HTTP Basic for alice and bob; everything is permitted, anonymous requests included. */
  @TestConfiguration(proxyBeanMethods = false)
  static class Security {
    @Bean
    SecurityFilterChain web(HttpSecurity http) throws Exception {
      return http.csrf(csrf -> csrf.disable())
          .authorizeHttpRequests(requests -> requests.anyRequest().permitAll())
          .httpBasic(withDefaults())
          .build();
    }

    @Bean
    UserDetailsService users() {
      return new InMemoryUserDetailsManager(
          User.withUsername("alice").password("{noop}alice-pw").roles("USER").build(),
          User.withUsername("bob").password("{noop}bob-pw").roles("USER").build());
    }

    /** The application's registry, as Actuator would give it. */
    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }

    /** The scope a @KafkaListener of consumer group "payments-group" claims its keys in. */
    @Bean
    ScopeResolver paymentsGroup() {
      return ScopeResolver.global("payments-group");
    }

    /** Lets ';' through Spring Security, so that the filter's own handling of it is tested. */
    @Bean
    WebSecurityCustomizer semicolons() {
      StrictHttpFirewall firewall = new StrictHttpFirewall();
      firewall.setAllowSemicolon(true);
      return web -> web.httpFirewall(firewall);
    }
  }
}
