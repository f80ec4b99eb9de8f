// pgJDBC client of the real-client matrix (tests/clients/README.md).
//
// Usage: java -cp postgresql.jar:CLASSES KanonClient JDBC_URL [key=value ...] < steps
// The key=value pairs are connection properties (user, password, ssl,
// sslmode, sslrootcert, prepareThreshold, ...).
// Each input line is a step, fields separated by tabs:
//   query NAME SQL                 Statement.executeQuery
//   prepared NAME SQL P1 P2...     PreparedStatement, $1.. become ?, parameters i:<int> or s:<text>
//   tables NAME SCHEMA             DatabaseMetaData.getTables(null, SCHEMA, "%", {"TABLE"})
//   columns NAME SCHEMA TABLE      DatabaseMetaData.getColumns(null, SCHEMA, TABLE, "%")
// Prints "== NAME" then one line per row (values tab-separated, NULL as \N),
// or "!! NAME<tab>SQLSTATE<tab>message" when the call fails.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Properties;

public final class KanonClient {
  private static final String[] TABLE_COLUMNS = {"TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE"};
  private static final String[] COLUMN_COLUMNS = {
    "TABLE_NAME", "COLUMN_NAME", "ORDINAL_POSITION", "TYPE_NAME", "DATA_TYPE", "NULLABLE"
  };

  private KanonClient() {}

  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    for (int i = 1; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      props.setProperty(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    StringBuilder out = new StringBuilder();
    try (Connection conn = DriverManager.getConnection(args[0], props)) {
      conn.setAutoCommit(true);
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isEmpty()) continue;
        String[] f = line.split("\t", -1);
        try {
          StringBuilder rows = new StringBuilder();
          run(conn, f, rows);
          out.append("== ").append(f[1]).append('\n').append(rows);
        } catch (SQLException e) {
          out.append("!! ").append(f[1]).append('\t').append(e.getSQLState()).append('\t');
          out.append(e.getMessage().split("\n")[0]).append('\n');
        }
      }
    }
    System.out.print(out);
  }

  private static void run(Connection conn, String[] f, StringBuilder rows) throws SQLException {
    switch (f[0]) {
      case "query":
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(f[2])) {
          print(rs, null, rows);
        }
        break;
      case "prepared":
        try (PreparedStatement ps = conn.prepareStatement(f[2].replaceAll("\\$[0-9]+", "?"))) {
          for (int i = 3; i < f.length; i++) {
            String value = f[i].substring(2);
            if (f[i].startsWith("i:")) {
              ps.setInt(i - 2, Integer.parseInt(value));
            } else {
              ps.setString(i - 2, value);
            }
          }
          try (ResultSet rs = ps.executeQuery()) {
            print(rs, null, rows);
          }
        }
        break;
      case "tables":
        {
          DatabaseMetaData md = conn.getMetaData();
          try (ResultSet rs = md.getTables(null, f[2], "%", new String[] {"TABLE"})) {
            print(rs, TABLE_COLUMNS, rows);
          }
        }
        break;
      case "columns":
        {
          DatabaseMetaData md = conn.getMetaData();
          try (ResultSet rs = md.getColumns(null, f[2], f[3], "%")) {
            print(rs, COLUMN_COLUMNS, rows);
          }
        }
        break;
      default:
        throw new IllegalArgumentException("JDBC client: unsupported step " + Arrays.toString(f));
    }
  }

  // Prints every row: all columns, or the named ones (metadata result sets).
  private static void print(ResultSet rs, String[] columns, StringBuilder rows)
      throws SQLException {
    int n = columns == null ? rs.getMetaData().getColumnCount() : columns.length;
    while (rs.next()) {
      for (int i = 0; i < n; i++) {
        String v = columns == null ? rs.getString(i + 1) : rs.getString(columns[i]);
        if (i > 0) rows.append('\t');
        rows.append(v == null ? "\\N" : v);
      }
      rows.append('\n');
    }
  }
}
