// sno through pgJDBC, as an application uses it: first the driver's plain defaults, then the
// one connection setting that makes the rest work. Run by tests/t/017_clients.pl against a
// cluster with sno (PGHOST: the socket directory, PGPORT). Prints PASS/FAIL per check and
// "N passed, M failed".

import java.io.StringReader;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Properties;
import org.postgresql.PGConnection;
import org.postgresql.util.PGobject;

public class SnoJdbc {
    static final String SAMPLE_TEXT = "brpk4q72xwf2m63l";
    static final byte[] SAMPLE_BYTES = HexFormat.of().parseHex("4e6f2160a0ff9a0a1033");
    static int passed = 0, failed = 0;

    static void check(String name, Object got, Object expected) {
        if (Objects.deepEquals(got, expected)) {
            passed++;
            System.out.println("PASS: " + name);
        } else {
            failed++;
            System.out.println("FAIL: " + name + "\n  expected: " + str(expected) + "\n  got:      " + str(got));
        }
    }

    static String str(Object value) {
        if (value instanceof byte[]) {
            return HexFormat.of().formatHex((byte[]) value);
        }
        return value instanceof Object[] ? Arrays.toString((Object[]) value) : String.valueOf(value);
    }

    /** Connects over the cluster's Unix socket, with extra connection settings. */
    static Connection connect(String... settings) throws SQLException {
        Properties properties = new Properties();
        properties.setProperty("user", "postgres");
        for (int i = 0; i < settings.length; i += 2) {
            properties.setProperty(settings[i], settings[i + 1]);
        }
        // pgJDBC speaks TCP only: the test cluster listens on localhost too.
        return DriverManager.getConnection(
                "jdbc:postgresql://localhost:" + System.getenv("PGPORT") + "/postgres", properties);
    }

    static String sqlState(ThrowingRunnable action) {
        try {
            action.run();
            return "no error";
        } catch (SQLException e) {
            return e.getSQLState();
        }
    }

    interface ThrowingRunnable {
        void run() throws SQLException;
    }

    static void defaults() throws Exception {
        try (Connection conn = connect()) {
            conn.createStatement().execute("CREATE TEMP TABLE t (id sno PRIMARY KEY, n int)");
            PreparedStatement byString = conn.prepareStatement("INSERT INTO t VALUES (?, 1)");
            byString.setString(1, SAMPLE_TEXT);
            check("pgJDBC defaults: setString is varchar, refused (42804)", sqlState(byString::execute), "42804");
            PreparedStatement byBytes = conn.prepareStatement("INSERT INTO t VALUES (?, 2)");
            byBytes.setBytes(1, SAMPLE_BYTES);
            check("pgJDBC defaults: setBytes in INSERT (bytea assigns to sno)", sqlState(byBytes::execute), "no error");
            ResultSet rs = conn.createStatement().executeQuery("SELECT id, id::bytea FROM t");
            rs.next();
            check("pgJDBC defaults: getString is the 16 characters", rs.getString(1), SAMPLE_TEXT);
            check("pgJDBC defaults: getBytes of id::bytea is the 10 bytes", rs.getBytes(2), SAMPLE_BYTES);
        }
    }

    static void stringtypeUnspecified() throws Exception {
        try (Connection conn = connect("stringtype", "unspecified")) {
            Statement statement = conn.createStatement();
            statement.execute("CREATE TEMP TABLE t (id sno PRIMARY KEY, n int)");
            PreparedStatement insert = conn.prepareStatement("INSERT INTO t VALUES (?, 1)");
            insert.setString(1, SAMPLE_TEXT);
            insert.execute();
            PreparedStatement select = conn.prepareStatement("SELECT n FROM t WHERE id = ?");
            select.setString(1, SAMPLE_TEXT);
            ResultSet rs = select.executeQuery();
            check("pgJDBC stringtype=unspecified: setString in INSERT and WHERE", rs.next() ? rs.getInt(1) : -1, 1);
            long copied = ((PGConnection) conn).getCopyAPI()
                    .copyIn("COPY t FROM STDIN", new StringReader("2222222222222222\t2\n"));
            check("pgJDBC: COPY FROM STDIN (text)", copied, 1L);
            Array array = conn.createArrayOf("sno", new String[] {SAMPLE_TEXT, "2222222222222222"});
            PreparedStatement any = conn.prepareStatement("SELECT array_agg(n ORDER BY n) FROM t WHERE id = ANY (?)");
            any.setArray(1, array);
            rs = any.executeQuery();
            rs.next();
            check("pgJDBC: an array of sno as a parameter", rs.getArray(1).getArray(), new Integer[] {1, 2});
            rs = statement.executeQuery("SELECT array_agg(id ORDER BY n) FROM t");
            rs.next();
            // The element type is not one pgJDBC knows: each element is a PGobject of type sno
            // whose value is the text form.
            Object[] elements = (Object[]) rs.getArray(1).getArray();
            check("pgJDBC: an array of sno as a result, PGobjects of type sno",
                    Arrays.stream(elements).map(e -> ((PGobject) e).getType() + ":" + ((PGobject) e).getValue()).toList(),
                    Arrays.asList("sno:" + SAMPLE_TEXT, "sno:2222222222222222"));
        }
    }

    public static void main(String[] args) throws Exception {
        defaults();
        stringtypeUnspecified();
        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
