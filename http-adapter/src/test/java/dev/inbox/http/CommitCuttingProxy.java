package dev.inbox.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of PostgreSQL that, once {@link #cutAtNextCommit armed}, cuts the first
 * connection that sends the filter's completion (its insert and {@code COMMIT} travel in one round
 * trip): either before the chunk reaches the server, so that nothing commits, or after the server
 * has committed it, so that the client never hears that it did. Either way the client sees a lost
 * connection in the middle of its commit.
 */
final class CommitCuttingProxy implements AutoCloseable {
  /** Where the cut falls. */
  enum Cut {
    /** The COMMIT never reaches the server. */
    BEFORE_COMMIT,
    /** The server commits; its answer is dropped. */
    AFTER_COMMIT
  }

  final AtomicInteger cuts = new AtomicInteger();
  private final ServerSocket listener;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile Cut cut;
  private volatile Callable<Boolean> committed;

  /**
   * @param jdbcUrl the database's {@code jdbc:postgresql://host:port/...} URL
   */
  CommitCuttingProxy(String jdbcUrl) throws IOException {
    URI server = URI.create(jdbcUrl.substring("jdbc:".length()));
    String host = server.getHost();
    int port = server.getPort() < 0 ? 5432 : server.getPort();
    listener = new ServerSocket(0);
    Thread accept =
        new Thread(
            () -> {
              while (!listener.isClosed()) {
                try {
                  Socket client = listener.accept();
                  Socket database = new Socket(host, port);
                  sockets.add(client);
                  sockets.add(database);
                  Connection connection = new Connection(client, database);
                  pump(connection, client, database, true);
                  pump(connection, database, client, false);
                } catch (IOException e) {
                  return;
                }
              }
            },
            "commit-cutting-proxy");
    accept.setDaemon(true);
    accept.start();
  }

  /** The proxy's JDBC URL in place of the database's. */
  String jdbcUrl(String databaseUrl) {
    URI server = URI.create(databaseUrl.substring("jdbc:".length()));
    return databaseUrl.replace(server.getAuthority(), "127.0.0.1:" + listener.getLocalPort());
  }

  /**
   * Cuts the next completion. With {@link Cut#AFTER_COMMIT}, the cut waits (up to a minute) until
   * {@code committed} says that the server's commit is visible.
   */
  void cutAtNextCommit(Cut where, Callable<Boolean> committed) {
    this.committed = committed;
    this.cut = where;
  }

  /** One proxied connection; once cut, nothing more is relayed either way. */
  private static final class Connection {
    final Socket client;
    final Socket database;
    volatile boolean cut;

    Connection(Socket client, Socket database) {
      this.client = client;
      this.database = database;
    }

    void close() {
      cut = true;
      try {
        client.close();
        database.close();
      } catch (IOException e) {
        // already gone
      }
    }
  }

  private void pump(Connection connection, Socket from, Socket to, boolean toDatabase) {
    Thread pump =
        new Thread(
            () -> {
              byte[] buffer = new byte[65536];
              try (InputStream in = from.getInputStream()) {
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  if (toDatabase && isCompletion(buffer, n)) {
                    Cut where = cut;
                    cut = null;
                    if (where != null) {
                      cutAt(where, connection, out, buffer, n);
                      return;
                    }
                  }
                  if (connection.cut) {
                    continue; // dropped: the cutting pump closes the connection when it is done
                  }
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (Exception e) {
                // the connection was closed, by either side or by the cut
              } finally {
                connection.close();
              }
            },
            "commit-cutting-proxy-pump");
    pump.setDaemon(true);
    pump.start();
  }

  private void cutAt(Cut where, Connection connection, OutputStream out, byte[] chunk, int length)
      throws Exception {
    if (where == Cut.AFTER_COMMIT) {
      connection.cut = true; // drops the server's answer
      out.write(chunk, 0, length);
      out.flush();
      long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
      while (!committed.call() && System.nanoTime() - deadline < 0) {
        Thread.sleep(20);
      }
    }
    cuts.incrementAndGet();
    connection.close();
  }

  /** The filter's completion: the insert of the key's record and COMMIT, in one chunk. */
  private static boolean isCompletion(byte[] buffer, int length) {
    String text = new String(buffer, 0, length, StandardCharsets.ISO_8859_1);
    return text.contains("COMMIT") && text.contains("INSERT INTO");
  }

  @Override
  public void close() throws IOException {
    listener.close();
    for (Socket socket : sockets) {
      socket.close();
    }
  }
}
