<?xml version="1.0" encoding="UTF-8"?>
<!-- One line per skipped test of a Surefire/Failsafe XML report: "Class.method: reason". The reason is the
     skip message (@Disabled, Testcontainers' disabledWithoutDocker) or the text of a failed assumption.
     Applied by the maven-antrun-plugin execution "print-skipped-tests" in the root pom. -->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="UTF-8"/>
  <xsl:template match="/">
    <xsl:for-each select="//testcase[skipped]">
      <xsl:variable name="assumption"
          select="substring-before(concat(substring-after(skipped, 'Assumption failed: '), '&#10;'), '&#10;')"/>
      <xsl:value-of select="@classname"/>
      <xsl:text>.</xsl:text>
      <xsl:value-of select="@name"/>
      <xsl:text>: </xsl:text>
      <xsl:choose>
        <xsl:when test="string-length($assumption) &gt; 0"><xsl:value-of select="normalize-space($assumption)"/></xsl:when>
        <xsl:when test="skipped/@message"><xsl:value-of select="normalize-space(skipped/@message)"/></xsl:when>
        <xsl:otherwise>no reason given</xsl:otherwise>
      </xsl:choose>
      <xsl:text>&#10;</xsl:text>
    </xsl:for-each>
  </xsl:template>
</xsl:stylesheet>
