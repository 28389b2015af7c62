// Package keyslot computes Redis Cluster hash slots, for the runtime (to
// match a MOVED reply or a moved slot to the channels it concerns) and the
// luashim emulator (to refuse KEYS that span slots).
package keyslot

import "strings"

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// Of returns the Redis Cluster hash slot of key, as CLUSTER KEYSLOT does:
// CRC16 (XMODEM variant) of the key's hash tag, modulo 16384. The hash tag
// is the text between the first '{' and the first '}' after it, when that
// text is not empty; otherwise the whole key is hashed.
func Of(key string) int {
	return int(crc16(hashTag(key))) % clusterSlots
}

// hashTag returns the part of key that Redis Cluster hashes.
func hashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 { // no closing brace, or "{}": hash the whole key
		return key
	}
	return key[open+1 : open+1+end]
}

// crc16Table is the byte-wise lookup table of CRC16-XMODEM
// (polynomial 0x1021, initial value 0, no reflection), built at init.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

// crc16 is the checksum Redis Cluster uses for key slots.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^s[i]]
	}
	return crc
}
