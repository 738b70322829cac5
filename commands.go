package main

import "os"

// commands are the binary's commands besides serving, by their first argument; each
// returns the process's exit code. Anything else starts the server.
var commands = map[string]func() int{
	// healthcheck asks the running server's /readyz (the image's HEALTHCHECK; healthcheck.go).
	"healthcheck": func() int { return healthcheck(os.Getenv, os.Stderr) },
	// hash-password reads a password and writes ADMIN_PASSWORD_HASH's value (admin.go).
	"hash-password": func() int { return hashPassword(os.Stdin, os.Stdout, os.Stderr) },
}
