package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.testing.PublicApi;
import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * HikariCP is an optional dependency of consumer-core: only {@link InboxDataSources#pool} uses it.
 * The tests load the inbox in a class loader that holds this module's class path without the
 * HikariCP jar, over the platform class loader, so that any class of the inbox that needs a
 * HikariCP class fails with {@link NoClassDefFoundError} instead of finding the one the test class
 * path has; and they read every compiled class for a reference to HikariCP, which loading alone
 * would not resolve.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WithoutHikariTest {
  private static final String HIKARI = "com.zaxxer.hikari.HikariDataSource";

  /**
   * Left open when the tests end: the copy of {@code TestDatabase} it loads drops its database in a
   * shutdown hook, which may still have classes to load.
   */
  private URLClassLoader withoutHikari;

  @BeforeAll
  void classLoaderWithoutHikari() throws MalformedURLException, ClassNotFoundException {
    String[] classPath = System.getProperty("java.class.path").split(File.pathSeparator);
    List<URL> urls = new ArrayList<>();
    for (String entry : classPath) {
      if (!Path.of(entry).getFileName().toString().startsWith("HikariCP")) {
        urls.add(Path.of(entry).toUri().toURL());
      }
    }
    assertThat(urls)
        .as("the test class path holds HikariCP (for the other tests) and this module's classes")
        .hasSize(classPath.length - 1)
        .contains(PublicApi.classesRoot(Inbox.class).toUri().toURL());
    withoutHikari =
        new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
    assertThatThrownBy(() -> withoutHikari.loadClass(HIKARI))
        .isInstanceOf(ClassNotFoundException.class);
    // DriverManager hands a caller only drivers its class loader sees as its own, and looks for
    // drivers once per JVM: the loader's copy of pgjdbc registers itself when initialised.
    Class.forName("org.postgresql.Driver", true, withoutHikari);
  }

  @Test
  void every_class_but_InboxDataSources_links_and_initialises_without_hikari() throws Exception {
    List<String> classes = PublicApi.classNames(Inbox.class);
    assertThat(classes).contains(InboxDataSources.class.getName(), "dev.inbox.internal.Claimer");
    for (String name : classes) {
      if (name.equals(InboxDataSources.class.getName())) {
        continue;
      }
      Class<?> type = Class.forName(name, true, withoutHikari);
      // Resolves every type in the signatures, which loading alone leaves for later.
      type.getDeclaredFields();
      type.getDeclaredConstructors();
      type.getDeclaredMethods();
    }
  }

  /** Loading resolves no method body; the constant pools name every class any body uses. */
  @Test
  void no_class_but_InboxDataSources_names_a_hikari_class_anywhere() throws Exception {
    Path root = PublicApi.classesRoot(Inbox.class);
    List<String> naming = new ArrayList<>();
    for (String name : PublicApi.classNames(Inbox.class)) {
      byte[] bytes = Files.readAllBytes(root.resolve(name.replace('.', '/') + ".class"));
      if (new String(bytes, StandardCharsets.ISO_8859_1).contains("com/zaxxer/")) {
        naming.add(name);
      }
    }
    assertThat(naming).containsExactly(InboxDataSources.class.getName());
  }

  @Test
  void plain_data_source_tests_pass_without_hikari() throws Exception {
    Class<?> tests = withoutHikari.loadClass(PlainDataSourceTest.class.getName());
    assertThat(tests).isNotSameAs(PlainDataSourceTest.class);
    var constructor = tests.getDeclaredConstructor();
    constructor.setAccessible(true);
    List<String> ran = new ArrayList<>();
    for (Method test : tests.getDeclaredMethods()) {
      if (Arrays.stream(test.getAnnotations())
          .noneMatch(a -> a.annotationType().getName().equals(Test.class.getName()))) {
        continue;
      }
      test.setAccessible(true);
      // Testcontainers, Flyway and pgjdbc look up services through the context class loader.
      Thread thread = Thread.currentThread();
      ClassLoader context = thread.getContextClassLoader();
      thread.setContextClassLoader(withoutHikari);
      try {
        test.invoke(constructor.newInstance());
      } catch (InvocationTargetException e) {
        throw new AssertionError(test.getName() + " failed without HikariCP", e.getCause());
      } finally {
        thread.setContextClassLoader(context);
      }
      ran.add(test.getName());
    }
    assertThat(ran).hasSize(4);
  }

  @Test
  void only_the_pool_itself_needs_hikari() throws Exception {
    UnaryOperator<String> mask = load(MaskPasswords.class);
    assertThat(mask.apply("jdbc:postgresql://db/pay?password=s3cret"))
        .isEqualTo("jdbc:postgresql://db/pay?password=***");

    UnaryOperator<String> pool = load(Pool.class);
    assertThatThrownBy(() -> pool.apply("jdbc:postgresql://127.0.0.1:1/none"))
        .isInstanceOf(NoClassDefFoundError.class)
        .hasMessageContaining("com/zaxxer/hikari");
  }

  /**
   * A new instance of the class as the loader without HikariCP loads it, seen through an interface
   * of the JDK that both loaders share. Calls through it link {@link InboxDataSources} in that
   * loader the way an application's code would, without reflection over its signatures (which name
   * HikariCP).
   */
  @SuppressWarnings("unchecked")
  private UnaryOperator<String> load(Class<? extends UnaryOperator<String>> call) throws Exception {
    Class<?> isolated = withoutHikari.loadClass(call.getName());
    assertThat(isolated).isNotSameAs(call);
    return (UnaryOperator<String>) isolated.getDeclaredConstructor().newInstance();
  }

  public static final class MaskPasswords implements UnaryOperator<String> {
    @Override
    public String apply(String text) {
      return InboxDataSources.maskPasswords(text);
    }
  }

  public static final class Pool implements UnaryOperator<String> {
    @Override
    public String apply(String jdbcUrl) {
      return InboxDataSources.pool(jdbcUrl).getPoolName();
    }
  }
}
