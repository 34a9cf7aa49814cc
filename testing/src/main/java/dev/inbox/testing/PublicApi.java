package dev.inbox.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Finds the public signatures of a module that name an internal type, by reflection over the
 * module's compiled classes.
 *
 * <p>A type is internal when its package has an {@code internal} segment ({@code
 * dev.inbox.internal}, {@code dev.inbox.kafka.internal}). The API of a module is every public type
 * outside such a package whose enclosing types are public too, and of it: the superclass, the
 * interfaces, the type parameters' bounds, and every public or protected field, constructor and
 * method (inherited public ones included) with its parameters, return type, thrown exceptions and
 * generic arguments. Method bodies are not read: an internal class may do the work, as long as no
 * caller has to name it.
 */
public final class PublicApi {
  private PublicApi() {}

  /** One place where the public API names an internal type. */
  public record Exposure(String owner, String member, String internalType) {
    @Override
    public String toString() {
      return owner + " " + member + " names " + internalType;
    }
  }

  /**
   * Every exposure in the module that compiled {@code anyClassOfModule}: the classes under the same
   * class-path root (its {@code target/classes}), loaded with its class loader.
   */
  public static List<Exposure> exposures(Class<?> anyClassOfModule) {
    List<Exposure> found = new ArrayList<>();
    for (Class<?> type : classesOf(anyClassOfModule)) {
      if (isApi(type)) {
        found.addAll(exposuresOf(type));
      }
    }
    return found;
  }

  /** Whether the package has an {@code internal} segment. */
  public static boolean isInternal(String packageName) {
    return ("." + packageName + ".").contains(".internal.");
  }

  private static boolean isApi(Class<?> type) {
    if (isInternal(type.getPackageName()) || type.isSynthetic()) {
      return false;
    }
    for (Class<?> t = type; t != null; t = t.getEnclosingClass()) {
      if (!Modifier.isPublic(t.getModifiers())) {
        return false;
      }
    }
    return true;
  }

  private static List<Exposure> exposuresOf(Class<?> type) {
    List<Exposure> found = new ArrayList<>();
    String owner = type.getName();
    check(found, owner, "extends", type.getGenericSuperclass());
    check(found, owner, "implements", type.getGenericInterfaces());
    checkTypeParameters(found, owner, "type parameter", type.getTypeParameters());
    for (Field field : members(type.getFields(), type.getDeclaredFields())) {
      check(found, owner, "field " + field.getName(), field.getGenericType());
    }
    List<Executable> executables = new ArrayList<>();
    executables.addAll(members(type.getConstructors(), type.getDeclaredConstructors()));
    executables.addAll(members(type.getMethods(), type.getDeclaredMethods()));
    for (Executable executable : executables) {
      if (executable.isSynthetic() || executable instanceof Method m && m.isBridge()) {
        continue;
      }
      String member = describe(executable);
      checkTypeParameters(found, owner, member, executable.getTypeParameters());
      check(found, owner, member, executable.getGenericParameterTypes());
      check(found, owner, member, executable.getGenericExceptionTypes());
      if (executable instanceof Method method) {
        check(found, owner, member, method.getGenericReturnType());
      }
    }
    return found;
  }

  /** The public members, inherited ones included, and the protected ones declared here. */
  @SafeVarargs
  private static <M extends Member> Set<M> members(M[] publicOnes, M... declared) {
    Set<M> members = new LinkedHashSet<>(Arrays.asList(publicOnes));
    for (M member : declared) {
      if (Modifier.isProtected(member.getModifiers())) {
        members.add(member);
      }
    }
    return members;
  }

  private static String describe(Executable executable) {
    String name =
        executable instanceof Constructor<?> ? "constructor" : "method " + executable.getName();
    StringBuilder params = new StringBuilder();
    for (Class<?> parameter : executable.getParameterTypes()) {
      params.append(params.length() == 0 ? "" : ", ").append(parameter.getSimpleName());
    }
    return name + "(" + params + ")";
  }

  private static void checkTypeParameters(
      List<Exposure> found, String owner, String member, TypeVariable<?>[] parameters) {
    for (TypeVariable<?> parameter : parameters) {
      check(found, owner, member + " <" + parameter.getName() + ">", parameter.getBounds());
    }
  }

  private static void check(List<Exposure> found, String owner, String member, Type... types) {
    Set<String> internal = new LinkedHashSet<>();
    for (Type type : types) {
      collectInternal(type, internal);
    }
    for (String name : internal) {
      found.add(new Exposure(owner, member, name));
    }
  }

  /**
   * The internal classes a type names, through arrays, generic arguments, wildcards and owners. A
   * type variable is checked where it is declared, so its uses are not followed (a bound such as
   * {@code T extends Comparable<T>} would not end).
   */
  private static void collectInternal(Type type, Set<String> into) {
    if (type instanceof Class<?> c) {
      while (c.isArray()) {
        c = c.getComponentType();
      }
      if (!c.isPrimitive() && isInternal(c.getPackageName())) {
        into.add(c.getName());
      }
    } else if (type instanceof ParameterizedType p) {
      collectInternal(p.getRawType(), into);
      if (p.getOwnerType() != null) {
        collectInternal(p.getOwnerType(), into);
      }
      for (Type argument : p.getActualTypeArguments()) {
        collectInternal(argument, into);
      }
    } else if (type instanceof WildcardType w) {
      for (Type bound : w.getUpperBounds()) {
        collectInternal(bound, into);
      }
      for (Type bound : w.getLowerBounds()) {
        collectInternal(bound, into);
      }
    } else if (type instanceof GenericArrayType a) {
      collectInternal(a.getGenericComponentType(), into);
    }
  }

  /** Every class compiled into the class-path root that holds {@code anchor}, loaded, not run. */
  private static List<Class<?>> classesOf(Class<?> anchor) {
    List<Class<?>> classes = new ArrayList<>();
    for (String name : classNames(anchor)) {
      try {
        classes.add(Class.forName(name, false, anchor.getClassLoader()));
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException(name + " is compiled but does not load", e);
      }
    }
    return classes;
  }

  /**
   * The binary names of every class compiled into the class-path root that holds {@code anchor}
   * ({@link #classesRoot}), without {@code module-info} and {@code package-info}.
   */
  public static List<String> classNames(Class<?> anchor) {
    Path root = classesRoot(anchor);
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .map(file -> root.relativize(file).toString())
          .filter(name -> name.endsWith(".class"))
          .map(name -> name.substring(0, name.length() - ".class".length()))
          .map(name -> name.replace(root.getFileSystem().getSeparator(), "."))
          .filter(name -> !name.endsWith("module-info") && !name.endsWith("package-info"))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The directory {@code anchor} was loaded from, such as the module's {@code target/classes}. */
  public static Path classesRoot(Class<?> anchor) {
    try {
      Path root = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (!Files.isDirectory(root)) {
        throw new IllegalStateException(
            anchor.getName()
                + " was loaded from "
                + root
                + ", not from a directory of compiled classes; run this from the module's build");
      }
      return root;
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
