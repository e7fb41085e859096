// sno through Go's drivers (pgx v4, lib/pq), as an application uses them.
//
// Each driver is first used with its plain defaults, then with the smallest registration that
// makes the rest work. An ID is used as the 10 bytes an application holds (what the reference
// Go package's Sno.Value() returns) and as its 16-character text.
//
// Built offline from Debian's packaged sources and run by tests/t/017_clients.pl against a
// cluster with sno (PGHOST, PGPORT, PGUSER set). Prints PASS/FAIL per check and
// "N passed, M failed".
package main

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"reflect"

	"github.com/jackc/pgtype"
	"github.com/jackc/pgx/v4"
	"github.com/lib/pq"
)

// The reference vector of the format: these 10 bytes are "brpk4q72xwf2m63l".
var sampleBytes, _ = hex.DecodeString("4e6f2160a0ff9a0a1033")

const sampleText = "brpk4q72xwf2m63l"

var passed, failed int

func check(name string, got, expected interface{}) {
	if reflect.DeepEqual(got, expected) {
		passed++
		fmt.Println("PASS: " + name)
		return
	}
	failed++
	fmt.Printf("FAIL: %s\n  expected: %#v\n  got:      %#v\n", name, expected, got)
}

// The SQLSTATE of a lib/pq error, or "" for none.
func pqCode(err error) string {
	if pqErr, ok := err.(*pq.Error); ok {
		return string(pqErr.Code)
	}
	return ""
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func pgxChecks(ctx context.Context) {
	conn, err := pgx.Connect(ctx, "dbname=postgres")
	must(err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE TEMP TABLE t (id sno PRIMARY KEY, n int)")
	must(err)

	// Defaults: a string goes as text; a []byte goes as bytea's hex text, which sno_in takes.
	_, err = conn.Exec(ctx, "INSERT INTO t VALUES ($1, 1)", sampleText)
	check("pgx defaults: string parameter in INSERT", err, nil)
	_, err = conn.Exec(ctx, "INSERT INTO t VALUES ($1, 2)", make([]byte, 10))
	check("pgx defaults: []byte parameter in INSERT", err, nil)
	var n int
	err = conn.QueryRow(ctx, "SELECT n FROM t WHERE id = $1", sampleBytes).Scan(&n)
	check("pgx defaults: []byte parameter in WHERE", []interface{}{err, n}, []interface{}{nil, 1})
	var text string
	must(conn.QueryRow(ctx, "SELECT id FROM t WHERE n = 2").Scan(&text))
	check("pgx defaults: a result scans as its 16 characters", text, "2222222222222222")
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "n"},
		pgx.CopyFromRows([][]interface{}{{sampleBytes, 3}}))
	check("pgx defaults: CopyFrom needs the type registered", err != nil, true)

	// The registration: sno and sno[] as bytea, so IDs are the 10 bytes both ways, in binary.
	var oid, arrayOID uint32
	must(conn.QueryRow(ctx, "SELECT 'sno'::regtype::oid, 'sno[]'::regtype::oid").Scan(&oid, &arrayOID))
	conn.ConnInfo().RegisterDataType(pgtype.DataType{Value: &pgtype.Bytea{}, Name: "sno", OID: oid})
	conn.ConnInfo().RegisterDataType(pgtype.DataType{Value: &pgtype.ByteaArray{}, Name: "_sno", OID: arrayOID})
	var raw []byte
	must(conn.QueryRow(ctx, "SELECT id FROM t WHERE id = $1", sampleBytes).Scan(&raw))
	check("pgx registered: a result scans as the 10 bytes", raw, sampleBytes)
	one := append(make([]byte, 9), 1)
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "n"},
		pgx.CopyFromRows([][]interface{}{{one, 4}}))
	check("pgx registered: CopyFrom", err, nil)
	must(conn.QueryRow(ctx, "SELECT id::text FROM t WHERE n = 4").Scan(&text))
	check("pgx registered: ... the copied ID", text, "2222222222222223")
	var ids [][]byte
	must(conn.QueryRow(ctx, "SELECT $1::sno[]", [][]byte{sampleBytes, one}).Scan(&ids))
	check("pgx registered: an array of sno in and out", ids, [][]byte{sampleBytes, one})
}

func pqChecks() {
	db, err := sql.Open("postgres", "dbname=postgres")
	must(err)
	defer db.Close()
	db.SetMaxOpenConns(1) // one session, so that the temporary table stays visible
	_, err = db.Exec("CREATE TEMP TABLE t (id sno PRIMARY KEY, n int)")
	must(err)

	// Defaults: a string works; a []byte goes out raw in a text parameter and is refused.
	_, err = db.Exec("INSERT INTO t VALUES ($1, 1)", sampleText)
	check("lib/pq defaults: string parameter in INSERT", err, nil)
	_, err = db.Exec("INSERT INTO t VALUES ($1, 2)", make([]byte, 10))
	check("lib/pq defaults: []byte parameter -> 22021 (raw bytes in a text parameter)", pqCode(err), "22021")
	var text string
	must(db.QueryRow("SELECT id FROM t WHERE n = 1").Scan(&text))
	check("lib/pq defaults: a result scans as its 16 characters", text, sampleText)
	var raw []byte
	must(db.QueryRow("SELECT id::bytea FROM t WHERE n = 1").Scan(&raw))
	check("lib/pq defaults: the 10 bytes through the bytea cast", raw, sampleBytes)

	// CopyIn writes a []byte as bytea's hex text, which sno_in takes, where lib/pq reads the
	// server's version as N.N. A release not yet out ("19rc1") it cannot read, and there it
	// writes bytea's escape text instead (\000 a byte), which sno_in refuses: lib/pq's, on any
	// type, and gone with the release.
	var version string
	must(db.QueryRow("SHOW server_version").Scan(&version))
	var major, minor int
	_, versionErr := fmt.Sscanf(version, "%d.%d", &major, &minor)
	tx, err := db.Begin()
	must(err)
	copyIn, err := tx.Prepare(pq.CopyIn("t", "id", "n"))
	must(err)
	one := append(make([]byte, 9), 1)
	_, err = copyIn.Exec(one, 3)
	must(err)
	_, err = copyIn.Exec()
	if versionErr == nil {
		check("lib/pq defaults: CopyIn of []byte", err, nil)
		must(copyIn.Close())
		must(tx.Commit())
		must(db.QueryRow("SELECT id::text FROM t WHERE n = 3").Scan(&text))
		check("lib/pq defaults: ... the copied ID", text, "2222222222222223")
	} else {
		check("lib/pq defaults, PostgreSQL "+version+": CopyIn of []byte -> 22P02 (bytea's escape text)",
			pqCode(err), "22P02")
		_ = copyIn.Close() // the transaction has failed: only its rollback is left
		must(tx.Rollback())
	}
	var ids pq.StringArray
	must(db.QueryRow("SELECT ARRAY[$1::sno, $2::sno]", sampleText, "2222222222222223").Scan(&ids))
	check("lib/pq defaults: an array of sno as text", []string(ids), []string{sampleText, "2222222222222223"})

	// The registration: binary_parameters=yes sends a []byte as binary, the 10 bytes sno_recv takes.
	binary, err := sql.Open("postgres", "dbname=postgres binary_parameters=yes")
	must(err)
	defer binary.Close()
	binary.SetMaxOpenConns(1)
	_, err = binary.Exec("CREATE TEMP TABLE t (id sno PRIMARY KEY, n int)")
	must(err)
	_, err = binary.Exec("INSERT INTO t VALUES ($1, 2)", sampleBytes)
	check("lib/pq binary_parameters: []byte parameter in INSERT", err, nil)
	var n int
	err = binary.QueryRow("SELECT n FROM t WHERE id = $1", sampleBytes).Scan(&n)
	check("lib/pq binary_parameters: []byte parameter in WHERE", []interface{}{err, n}, []interface{}{nil, 2})
}

func main() {
	pgxChecks(context.Background())
	pqChecks()
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
