package dev.inbox.testing;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Properties;

/**
 * A child process that connects as a crash test's children do, with a URL and a user and no
 * password of its own, prints whom it connected as, and stays up until killed. Arguments: JDBC URL,
 * user.
 */
public final class DatabaseProbe {
  public static void main(String[] args) throws Exception {
    Properties properties = new Properties();
    properties.setProperty("user", args[1]);
    try (Connection c = DriverManager.getConnection(args[0], properties);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_user")) {
      rs.next();
      System.out.println("connected as " + rs.getString(1));
    } catch (Exception e) {
      System.out.println("could not connect: " + e.getMessage());
      System.exit(1);
    }
    Thread.sleep(120_000);
  }
}
