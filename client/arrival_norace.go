//go:build !race && linux && (amd64 || arm64)

package client

// raceBuild is true under the race detector (see rxConn.recvmsg).
const raceBuild = false
